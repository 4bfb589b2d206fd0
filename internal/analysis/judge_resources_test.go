package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// resourceWarned reports whether some warning contains part.
func resourceWarned(ws []string, part string) bool {
	return slices.ContainsFunc(ws, func(s string) bool { return strings.Contains(s, part) })
}

// TestResourceWarningsAtTheirEdges checks the warnings of a phase's
// resources where their thresholds fall: a window of exactly as many
// sample times as a P99 needs, a window with none, a component one sample
// short in a window that has enough, a component with no memory at all.
func TestResourceWarningsAtTheirEdges(t *testing.T) {
	tests := []struct {
		name    string
		change  func(in *ResourceInput)
		warn    []string // each must appear in some warning
		notWarn []string // none may appear in any warning
	}{
		{"no sample in the window", func(in *ResourceInput) {
			in.Window = Window{Start: t0.Add(30 * time.Second), End: t0.Add(40 * time.Second)}
		}, nil, []string{"sample times in the window"}},
		{"10 sample times, as a P99 needs", func(in *ResourceInput) { in.Window.End = t0.Add(10 * time.Second) },
			nil, []string{"sample times in the window", "samples in the window"}},
		{"9 sample times", func(in *ResourceInput) { in.Window.End = t0.Add(9 * time.Second) },
			[]string{"only 9 sample times in the window: a P99 needs at least 10"}, nil},
		{"10 sample times, 9 of b's CPU", func(in *ResourceInput) {
			in.Window.End = t0.Add(10 * time.Second)
			in.Series["b"]["cpu_cores"] = in.Series["b"]["cpu_cores"][1:]
		}, []string{"component b has only 9 CPU samples in the window: no P99, and no P99 for the totals"},
			[]string{"only 10 sample times"}},
		{"no memory for b", func(in *ResourceInput) { delete(in.Series["b"], "rss_bytes") },
			[]string{"component b has no memory samples in the window; the memory totals leave it out"},
			[]string{"only 0 memory samples"}},
	}
	for _, tt := range tests {
		in := threeComponents()
		tt.change(&in)
		res := SummarizeResources(in)
		for _, w := range tt.warn {
			if !resourceWarned(res.Warnings, w) {
				t.Errorf("%s: no warning %q in %q", tt.name, w, res.Warnings)
			}
		}
		for _, w := range tt.notWarn {
			if resourceWarned(res.Warnings, w) {
				t.Errorf("%s: warning %q in %q", tt.name, w, res.Warnings)
			}
		}
	}
}

// TestSummedSeriesOfMixedGridsAtItsEdge checks the warning on a summed
// series whose components were sampled at different times: a target read
// from Prometheus every 10 s and a local exporter every second (at 0.274 s
// past it) that started 15 s into the window. The exporter has no tick
// within half a step of the target's first step, nor of its last when it
// stopped 6 s before the end: one step missed at each end is the nearest
// value falling outside the window, and not worth a warning; a third is.
func TestSummedSeriesOfMixedGridsAtItsEdge(t *testing.T) {
	const want = "the summed CPU series has 7 of the 10 sample times of its most sparsely sampled component: only those at which all 2 components have a value near"
	tests := []struct {
		lastTick int // seconds after t0, plus 0.274 s
		warn     bool
	}{
		{94, false}, // 8 of 10
		{84, true},  // 7 of 10
	}
	for _, tt := range tests {
		var local, prom []Point
		for s := 15; s <= tt.lastTick; s++ {
			local = append(local, Point{T: t0.Add(time.Duration(s)*time.Second + 274*time.Millisecond), V: 1})
		}
		for s := 10; s <= 100; s += 10 {
			prom = append(prom, Point{T: t0.Add(time.Duration(s) * time.Second), V: 2})
		}
		res := SummarizeResources(ResourceInput{
			Window:     Window{Start: t0, End: t0.Add(100 * time.Second)},
			Components: []Component{{Name: "exporter", Kind: "run"}, {Name: "target", Kind: "prometheus"}},
			Series: map[string]map[string][]Point{
				"exporter": {observe.CPUCores: local},
				"target":   {observe.ProcessCPUCores: prom},
			},
		})
		if got := resourceWarned(res.Warnings, "the summed CPU series"); got != tt.warn {
			t.Errorf("exporter until %d s: summed CPU series of %d samples, warned %v, want %v: %q",
				tt.lastTick, res.CPU.Summed.N, got, tt.warn, res.Warnings)
		}
		if tt.warn && !resourceWarned(res.Warnings, want) {
			t.Errorf("exporter until %d s: no warning %q in %q", tt.lastTick, want, res.Warnings)
		}
	}
}

// TestGeneratorCoresOfZeroAreUnknown checks that a generator whose
// cores_available samples read 0 is judged against the cores the run
// knew of otherwise, as when it has no such samples.
func TestGeneratorCoresOfZeroAreUnknown(t *testing.T) {
	in := threeComponents()
	in.CoresAvailable = 2
	in.Series["perflab"]["cores_available"] = series(slices.Repeat([]float64{0}, 20)...)
	in.Series["perflab"]["cpu_cores"] = series(slices.Repeat([]float64{1.8}, 20)...)
	res := SummarizeResources(in)
	want := "client-bound: generator CPU P99 1.8 of 2 cores (≥ 90 %)"
	if !res.ClientBound || res.CoresAvailable != 2 || !resourceWarned(res.Warnings, want) {
		t.Errorf("client-bound %v, %v cores, warnings %q; want true, 2 and %q", res.ClientBound, res.CoresAvailable, res.Warnings, want)
	}
}
