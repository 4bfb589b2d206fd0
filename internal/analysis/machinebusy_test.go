package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/observe"
)

// busyResources is a 20-second phase of app (kind) at appCPU cores beside
// the generator at 0.3 on a 2-core machine whose /proc/stat read busy
// cores and steal stolen ones at every sample, 14 tasks runnable.
func busyResources(kind string, appCPU, busy, steal float64) *Resources {
	flat := func(v float64) []Point { return series(slices.Repeat([]float64{v}, 20)...) }
	return SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(20e9)},
		Components: []Component{{Name: "app", Kind: kind}, {Name: "perflab", Kind: KindGenerator}},
		Series: map[string]map[string][]Point{
			"app": {observe.CPUCores: flat(appCPU), observe.RSSBytes: flat(100 << 20)},
			"perflab": {observe.CPUCores: flat(0.3), observe.RSSBytes: flat(50 << 20), observe.CoresAvailable: flat(2),
				observe.MachineCores: flat(2), observe.MachineBusyCores: flat(busy), observe.MachineStealCores: flat(steal),
				observe.MachineRunnable: flat(14)},
		},
	})
}

// Others than perflab and its components kept a 2-core machine full: the
// phase is machine-busy, naming the others' share; a machine that was not
// full, or full of the system's own work, is not. The Tempo run of the
// issue: 94–100 % busy with others at 1.2 of 2 cores.
func TestMachineBusy(t *testing.T) {
	for _, tt := range []struct {
		name             string
		kind             string
		app, busy, steal float64
		want             string // part of the reason; "" when not busy
	}{
		{"others at 1.2 cores", "run", 0.4, 1.9, 0, "others than perflab and its components used 1.20 of 2 cores while the machine was 1.90 busy (medians over"},
		{"stolen by the hypervisor", "run", 0.4, 1.2, 0.7, "used 1.20 of 2 cores while the machine was 1.90 busy"},
		{"an attached app counts as its own", "attach", 1.4, 1.9, 0, ""},
		{"not full", "run", 0.4, 1.5, 0, ""},
		{"full of the system's own work", "run", 1.5, 1.95, 0, ""},
		{"others at 0.5 of 2", "run", 1.0, 1.8, 0, "used 0.50 of 2 cores"},
		{"others at 0.3 of 2", "run", 1.2, 1.8, 0, ""},
	} {
		r := busyResources(tt.kind, tt.app, tt.busy, tt.steal)
		if r.MachineBusy != (tt.want != "") || !strings.Contains(r.BusyWhy, tt.want) {
			t.Errorf("%s: machine-busy %v (%q); want %v (%q)", tt.name, r.MachineBusy, r.BusyWhy, tt.want != "", tt.want)
		}
		if tt.want != "" && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "machine-busy: ") }) {
			t.Errorf("%s: warnings %q", tt.name, r.Warnings)
		}
	}
	// A machine-busy phase is marked and kept out of the fits, as a
	// machine-bound one.
	p := heldPhase("m", heldSummary(100, 100, 0, 10e6, 2000))
	p.Resources = busyResources("run", 0.4, 1.9, 0)
	h := JudgeHeld([]PhaseData{p})[0]
	if !h.Sustained() || h.Fits() || !slices.Equal(h.Marks(), []string{"machine-busy"}) || !strings.Contains(h.LeftOutText("m"), "it was machine-busy") {
		t.Errorf("held %+v, marks %q, %q", h, h.Marks(), h.LeftOutText("m"))
	}
	// A run stored before perflab sampled the machine has no verdict.
	r := machineResources("run", 0.5, 1<<30)
	if r.MachineBusy {
		t.Errorf("no machine samples: busy %q", r.BusyWhy)
	}
}

// A component whose /metrics timed out in a third of the samples has its
// heap figures from the others: the resources say how many, not that
// they are of the whole window.
func TestMissingSamplesAreSaid(t *testing.T) {
	flat := func(n int, v float64) []Point { return series(slices.Repeat([]float64{v}, n)...) }
	r := SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(50e9)},
		Components: []Component{{Name: "tempo", Kind: "run"}, {Name: "perflab", Kind: KindGenerator}},
		Series: map[string]map[string][]Point{
			"tempo":   {observe.CPUCores: flat(50, 0.3), observe.RSSBytes: flat(50, 1<<30), observe.GoHeapInuseBytes: flat(33, 1<<29)},
			"perflab": {observe.CPUCores: flat(50, 0.3), observe.RSSBytes: flat(50, 50<<20)},
		},
	})
	want := "component tempo has fewer samples than the window's 50 sample times (go_heap_inuse_bytes 33)"
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
	if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "rss_bytes") || strings.Contains(w, "perflab has") }) {
		t.Errorf("a metric with every sample, or the generator, named: %q", r.Warnings)
	}
}
