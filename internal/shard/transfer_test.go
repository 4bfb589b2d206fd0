package shard

import (
	"context"
	"strings"
	"testing"
)

func TestWorkersPartsReachTheCoordinatorInOrder(t *testing.T) {
	ctx := context.Background()
	dir, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Store: dir, ID: "r1"}
	shards, whole := shardedAndWhole(t, 2, 5, 40)
	ups := []*Uploader{NewUploader(run, 3, 0), NewUploader(run, 3, 1)}
	f := NewFollower(run, 3, 2)
	m := NewMerger(2)
	take := func() {
		t.Helper()
		got, ended, err := f.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for w, ivs := range got {
			m.Add(w, ivs)
		}
		for _, w := range ended {
			m.End(w)
		}
	}
	// Worker 0 writes two parts, worker 1 one; then both the rest and their ends.
	for w, cut := range []int{2, 1} {
		for _, iv := range shards[w][:cut] {
			ups[w].Interval(iv.Workload, iv.Interval)
		}
		if err := ups[w].Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, iv := range shards[0][2:4] {
		ups[0].Interval(iv.Workload, iv.Interval)
	}
	if err := ups[0].Flush(ctx); err != nil {
		t.Fatal(err)
	}
	take()
	if ready := m.Ready(); len(ready) != 1 || ready[0].Index != 0 {
		t.Fatalf("after worker 1's first interval: %d ready", len(ready))
	}
	for w, from := range []int{4, 1} {
		for _, iv := range shards[w][from:] {
			ups[w].Interval(iv.Workload, iv.Interval)
		}
		if err := ups[w].Finish(ctx, End{Error: map[int]string{0: "", 1: "driver failed"}[w]}); err != nil {
			t.Fatal(err)
		}
	}
	take()
	ready := m.Ready()
	if len(ready) != 4 {
		t.Fatalf("after both ends: %d more ready, want 4", len(ready))
	}
	for i, iv := range ready {
		if n, want := iv.Ops["GET /"].Classes.Total(), whole[i+1].Ops["GET /"].Classes.Total(); n != want {
			t.Errorf("interval %d: %d operations, want %d", i+1, n, want)
		}
	}
	ends := f.Ends()
	if ends[0] == nil || ends[1] == nil || ends[0].Parts != 3 || ends[1].Parts != 2 || !strings.Contains(ends[1].Error, "driver failed") {
		t.Errorf("ends %+v %+v", ends[0], ends[1])
	}
}

func TestAnEndIsNotTakenBeforeEveryPartIsRead(t *testing.T) {
	ctx := context.Background()
	dir, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Store: dir, ID: "r1"}
	// The end says two parts, but only part 1 is there: part 0 has not
	// become visible yet (a store that lists lazily).
	if err := putJSON(ctx, dir, run.partKey(0, 0, 1), []WorkloadInterval{}); err != nil {
		t.Fatal(err)
	}
	if err := putJSON(ctx, dir, run.endKey(0, 0), End{Worker: 0, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	f := NewFollower(run, 0, 1)
	_, ended, err := f.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 0 || f.Parts()[0] != 0 {
		t.Errorf("ended %v after reading %d parts: the end was taken before part 0 arrived", ended, f.Parts()[0])
	}
}
