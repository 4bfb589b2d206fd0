package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// sideBySideRun is one profile of 40 s in which prom (group prom) and vm
// (group vm) take the same remote-write load side by side, sampled every
// second:
//
//	CPU     prom 1.7 × (1 + 0.05 sin i), vm 1.0 × (1 + 0.05 cos i): means ≈ 1.7 and 1.0, B/A ≈ 0.59: vm uses x1.7 less CPU
//	memory  prom 5 GiB + i MiB, vm 1 GiB + i MiB: means 5140.5 and 1044.5 MiB, B/A = 0.203: x4.9 less memory
//	latency write-prom 20 ms, write-vm 10 ms in every one of 40 intervals of 100 writes: B/A = 0.5 with the
//	        interval a point: x2.0 lower p50 and p99 latency; the request rates are equal: ~
func sideBySideRun() *view.Run {
	r := &view.Run{Name: "vm-vs-prom", Started: t0, Ended: t0.Add(time.Minute), State: "completed"}
	comps := []analysis.Component{{Name: "prom", Group: "prom", Kind: "run"}, {Name: "vm", Group: "vm", Kind: "run"}}
	win := analysis.Window{Start: t0, End: t0.Add(40 * time.Second), Rule: "test"}
	series := map[string]map[string][]analysis.Point{
		"prom": {"cpu_cores": ticks(win.End, 40, func(i int) float64 { return 1.7 * (1 + 0.05*math.Sin(float64(i))) }),
			"rss_bytes": ticks(win.End, 40, func(i int) float64 { return 5*gib + float64(i)*mib })},
		"vm": {"cpu_cores": ticks(win.End, 40, func(i int) float64 { return 1.0 * (1 + 0.05*math.Cos(float64(i))) }),
			"rss_bytes": ticks(win.End, 40, func(i int) float64 { return gib + float64(i)*mib })},
	}
	o := analysis.DefaultBootstrap()
	g := view.ComparisonGroup{Name: "Profile `small`"}
	for _, res := range []string{analysis.CompareCPU, analysis.CompareMemory} {
		a := analysis.ResourceSamples(series, win, []string{"prom"}, res)
		b := analysis.ResourceSamples(series, win, []string{"vm"}, res)
		g.Comparisons = append(g.Comparisons, analysis.CompareResource("components", res, [][]float64{a}, [][]float64{b}, o))
	}
	lat := func(d time.Duration) ([][]float64, [][]*stats.Hist) {
		var ivs []*stats.Interval
		for i := range 40 {
			st := stats.NewOpStats()
			for range 100 {
				st.Latency.Record(d)
			}
			st.Classes[stats.OK] = 100
			ivs = append(ivs, &stats.Interval{Start: t0.Add(sec(float64(i))), End: t0.Add(sec(float64(i + 1))), Ops: map[string]*stats.OpStats{"write": st}})
		}
		return [][]float64{analysis.IntervalRates(ivs)}, [][]*stats.Hist{analysis.IntervalLatencies(ivs)}
	}
	ra, la := lat(20 * time.Millisecond)
	rb, lb := lat(10 * time.Millisecond)
	g.Comparisons = append(g.Comparisons, analysis.CompareRate("workload", ra, rb, o),
		analysis.CompareQuantile("workload", 0.5, la, lb, o), analysis.CompareQuantile("workload", 0.99, la, lb, o))
	cell := &view.Cell{Name: "default", State: "completed", Components: comps,
		SideBySide: []view.SideBySide{{A: "prom", B: "vm", Notes: []string{"the workloads' param headers differ"}, Groups: []view.ComparisonGroup{g}}}}
	r.Cells = []*view.Cell{cell}
	return r
}

func TestGoldenSideBySide(t *testing.T) {
	r := sideBySideRun()
	md, _, _ := goldenRun(t, "sidebyside", r)
	for _, want := range []string{"| components | CPU |", "vm uses x1.7 less CPU", "vm uses x4.9 less memory",
		"vm has x2.0 lower p50 latency", "| workload | request rate | 100.0/s | 100.0/s | 1.00 | 1.00–1.00 | ~ |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
