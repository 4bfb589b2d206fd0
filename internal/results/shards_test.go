package results

import (
	"reflect"
	"testing"
)

func TestShards(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	want := []Shard{
		{Cell: 0, Profile: "p", Index: 0, Host: "a", State: ShardCompleted, Requests: 300, Rate: 100,
			HasCPU: true, CPUP99: 0.4, CPUMax: 0.5, Cores: 2, LagP99: 0.0002},
		{Cell: 0, Profile: "p", Index: 1, Host: "b", State: ShardLost, Message: "never wrote its end", Requests: 120, Rate: 40},
		{Cell: 0, Profile: "p", Index: 2, Host: "c", State: ShardCompleted, Requests: 300, Rate: 100,
			HasCPU: true, CPUP99: 1.9, CPUMax: 2, Cores: 2, ClientBound: true, ClientWhy: "CPU p99 1.9 of 2 cores"},
	}
	for _, s := range want {
		if err := r.AddShard(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AddShard(want[0]); err == nil {
		t.Error("a worker's part of a phase was added twice")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.Shards()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Shards() = %+v, %v\nwant %+v", got, err, want)
	}
}

// TestNoShardsTable reads a store written before the shards table: it has
// no shards.
func TestNoShardsTable(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.db.Exec(`DROP TABLE shards`); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Shards(); err != nil || len(got) != 0 {
		t.Errorf("Shards() = %v, %v; want none", got, err)
	}
}
