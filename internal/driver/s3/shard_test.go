package s3driver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// TestShardedWorkersShareThePreparedObjects: a coordinator's driver
// prepares objects under a prefix of its own choosing; two workers' drivers
// adopt it and read them, write new objects under names of their own,
// delete disjoint prepared objects, and each cleans up only what it wrote;
// the coordinator's cleanup removes the rest.
func TestShardedWorkersShareThePreparedObjects(t *testing.T) {
	srv := startServer(t)
	const bucket = "sharded"
	srv.makeBucket(t, bucket)
	c := srv.config(bucket, map[string]int{"get": 2, "put": 1})
	c.Objects, c.Seed = 20, 7
	coord := newDriver(t, c)
	if err := coord.Prepare(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var workers [2]*Driver
	nextDraws := map[string]bool{}
	for i := range workers {
		w := newDriver(t, c) // a prefix of its own, until it adopts the coordinator's
		if err := w.Adopt(coord.Handoff()); err != nil {
			t.Fatal(err)
		}
		if err := w.Shard(i, 2); err != nil {
			t.Fatal(err)
		}
		workers[i] = w
		var r driver.Result
		for range 60 {
			w.Do(context.Background(), 0, &r)
			if r.Class != stats.OK {
				t.Fatalf("worker %d %s: %v %s", i, r.Op, r.Class, r.Message)
			}
		}
		nextDraws[fmt.Sprint(w.states.Get(0).rng.Uint64())] = true
	}
	if len(nextDraws) != 2 {
		t.Errorf("with one seed both workers' VU 0 draw the same objects: %v", nextDraws)
	}
	objs := srv.objects(t, bucket)
	var puts [2]int
	for key := range objs {
		for i := range workers {
			if strings.HasPrefix(key, coord.prefix+"put-w"+string(rune('0'+i))+"-") {
				puts[i]++
			}
		}
	}
	if puts[0] == 0 || puts[1] == 0 || puts[0]+puts[1]+20 != len(objs) {
		t.Errorf("bucket holds %d objects: %v new ones by worker; want each worker's own names beside the 20 prepared", len(objs), puts)
	}
	for _, w := range workers {
		if err := w.Cleanup(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if left := srv.objects(t, bucket); len(left) != 20 {
		t.Errorf("after the workers' cleanup %d objects are left, want the 20 prepared", len(left))
	}
	if err := coord.Cleanup(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if left := srv.objects(t, bucket); len(left) != 0 {
		t.Errorf("after the coordinator's cleanup %d objects are left", len(left))
	}
}

func TestShardedDeletesTakeDisjointPreparedObjects(t *testing.T) {
	seen := map[int64]int{}
	for i := range 3 {
		d := &Driver{objects: 10}
		if err := d.Shard(i, 3); err != nil {
			t.Fatal(err)
		}
		for n := int64(0); ; n++ {
			k := d.fixedIndex(n)
			if k >= 10 {
				break
			}
			seen[k]++
		}
	}
	for k := range int64(10) {
		if seen[k] != 1 {
			t.Errorf("prepared object %d is deleted by %d workers, want 1", k, seen[k])
		}
	}
}
