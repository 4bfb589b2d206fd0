package otlpdriver

import (
	"testing"
	"time"
)

// TestShardedWorkersDrawTheirOwnTraces: two workers of one seeded plan
// give their VU 0 different traces.
func TestShardedWorkersDrawTheirOwnTraces(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var ids [2]string
	for i := range ids {
		d, err := New(Config{Endpoint: "127.0.0.1:1", Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Shard(i, 2); err != nil {
			t.Fatal(err)
		}
		var tr trace
		d.newIngestState(0).gen.trace(&tr, now)
		ids[i] = string(tr.id[:])
	}
	if ids[0] == ids[1] {
		t.Error("both workers' VU 0 made the same first trace")
	}
}
