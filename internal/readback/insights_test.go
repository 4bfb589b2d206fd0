package readback

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// A phase whose window is shorter than its plan's warm-up is sized with
// the warning that its figures may be low; one whose window is longer is
// not. Before, the warm-up never reached the sizing, and the warning never
// fired.
func TestSizesWarnOfAWindowShorterThanTheWarmUp(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var cpu, mem []analysis.Point
	for i := 1; i <= 20; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		cpu = append(cpu, analysis.Point{T: at, V: 0.5})
		mem = append(mem, analysis.Point{T: at, V: 64 << 20})
	}
	series := map[string]map[string][]analysis.Point{"db": {"cpu_cores": cpu, "rss_bytes": mem}}
	for _, tt := range []struct {
		warmup time.Duration
		warn   bool
	}{{30 * time.Second, true}, {10 * time.Second, false}} {
		w := analysis.Window{Start: t0, End: t0.Add(20 * time.Second)}
		in := analysis.ResourceInput{Window: w, Components: []analysis.Component{{Name: "db", Kind: "run"}}, Series: series}
		c := &view.Cell{Components: in.Components, Phases: []*view.Phase{{Profile: "small", State: "completed",
			Warmup: tt.warmup, Window: w, Resources: analysis.SummarizeResources(in)}}}
		ins, err := cellInsights(c, results.Meta{}, series, analysis.DefaultInsightOptions())
		if err != nil || ins == nil || len(ins.Sizes) != 1 {
			t.Fatalf("warm-up %v: insights %+v, %v", tt.warmup, ins, err)
		}
		warned := slices.ContainsFunc(ins.Sizes[0].Warnings, func(w string) bool { return strings.Contains(w, "is shorter than the warm-up (30s)") })
		if warned != tt.warn {
			t.Errorf("warm-up %v: warned %v, want %v: %q", tt.warmup, warned, tt.warn, ins.Sizes[0].Warnings)
		}
	}
}
