package run

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine"
)

func TestPhaseWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	sum := func(start, ws, we, end float64) engine.Summary {
		return engine.Summary{Start: at(start), LoadEnd: at(end), Window: engine.Window{Start: at(ws), End: at(we), Rule: "r"}}
	}
	sums := []engine.Summary{sum(0, 1, 10, 10), sum(0, 2, 9, 9.5)}
	w, ok := PhaseWindow(0, sums)
	if !ok || !w.Start.Equal(at(2)) || !w.End.Equal(at(9)) || !w.LoadEnd.Equal(at(10)) {
		t.Errorf("without warm-up: %v–%v, load end %v", w.Start, w.End, w.LoadEnd)
	}
	w, _ = PhaseWindow(3*time.Second, sums)
	if !w.Start.Equal(at(3)) || !w.End.Equal(at(10)) || !strings.Contains(w.Rule, "warm-up of 3s") {
		t.Errorf("with warm-up: %v–%v (%s)", w.Start, w.End, w.Rule)
	}
	if _, ok := PhaseWindow(0, []engine.Summary{{}}); ok {
		t.Error("a phase whose workloads never started has a window")
	}
	// The load starts after the phase does: after the drivers' preparation,
	// and in a distributed run at the instant announced 2 s ahead. The
	// warm-up counts from the load's start, as each workload's own window
	// does (and perflab merge's), not from the phase's.
	late := []engine.Summary{sum(2, 3, 10, 10), sum(2.01, 3.01, 10, 10)}
	w, _ = PhaseWindow(time.Second, late)
	if !w.Start.Equal(at(3)) || !w.End.Equal(at(10)) {
		t.Errorf("load started 2 s into the phase, warm-up 1s: %v–%v, want %v–%v", w.Start, w.End, at(3), at(10))
	}
}
