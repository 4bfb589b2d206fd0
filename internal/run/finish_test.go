package run

import (
	"runtime/debug"
	"testing"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// gcPercent reads the collector's target without changing it.
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

func TestFinishReadsBackWithTheHeapKeptClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct{ user, during int }{{100, finishGC}, {10, 10}, {-1, -1}} {
		debug.SetGCPercent(c.user)
		rec, err := Create(t.TempDir(), results.Meta{Command: "test"}, nil, Discard{})
		if err != nil {
			t.Fatal(err)
		}
		during := 0
		judge := func(*view.Run) (results.Status, error) {
			during = gcPercent()
			return results.Status{State: results.StateCompleted}, nil
		}
		if _, err := rec.Finish(judge, nil, nil); err != nil {
			t.Fatal(err)
		}
		if after := gcPercent(); during != c.during || after != c.user {
			t.Errorf("GOGC %d: %d while the run was read back and %d after, want %d and %d", c.user, during, after, c.during, c.user)
		}
	}
}

func TestLeanGCOverlappingPutsTheTargetBack(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	a := leanGC()
	b := leanGC() // a second run finishing at once
	a()
	if got := gcPercent(); got != finishGC {
		t.Errorf("with one Finish still under way the target is %d, want %d", got, finishGC)
	}
	b()
	if got := gcPercent(); got != 100 {
		t.Errorf("after both the target is %d, want 100", got)
	}
}
