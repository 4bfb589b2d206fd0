package analysis

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// TestMemoryFromPrometheusMetrics checks that a component read from
// Prometheus has its memory figure from its working set or a host's used
// memory, and is in the memory total.
func TestMemoryFromPrometheusMetrics(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pts := func(v float64) []Point {
		return []Point{{T: t0, V: v}, {T: t0.Add(time.Second), V: v}}
	}
	res := SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(time.Second)},
		Components: []Component{{Name: "tempo-ingester", Kind: "prometheus"}, {Name: "node", Kind: "prometheus"}},
		Series: map[string]map[string][]Point{
			"tempo-ingester": {observe.WorkingSetBytes: pts(100), observe.CgroupCPUCores: pts(0.5)},
			"node":           {observe.MemoryUsedBytes: pts(300), observe.CPUCores: pts(1)},
		},
	})
	for i, want := range []string{observe.WorkingSetBytes, observe.MemoryUsedBytes} {
		if c := res.Components[i]; c.MemoryMetric != want {
			t.Errorf("%s: memory from %q, want %s", c.Name, c.MemoryMetric, want)
		}
	}
	if res.Memory.Components != 2 || res.Memory.Sum.Max != 400 {
		t.Errorf("memory total over %d components, max %g; want 2 and 400", res.Memory.Components, res.Memory.Sum.Max)
	}
}

// TestTotalsOfMixedGrids checks the totals of a local component (ticks at
// 0.274 s past each second) beside one read from Prometheus (at whole
// seconds): the summed series pairs each Prometheus step with the nearest
// local tick, and the window counts the ticks of one series, not of both.
func TestTotalsOfMixedGrids(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var local, prom []Point
	for i := range 12 {
		local = append(local, Point{T: t0.Add(time.Duration(i)*time.Second + 274*time.Millisecond), V: 1})
		prom = append(prom, Point{T: t0.Add(time.Duration(i) * time.Second), V: 2})
	}
	res := SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(12 * time.Second)},
		Components: []Component{{Name: "exporter", Kind: "run"}, {Name: "target", Kind: "prometheus"}},
		Series: map[string]map[string][]Point{
			"exporter": {observe.CPUCores: local, observe.RSSBytes: local},
			"target":   {observe.ProcessCPUCores: prom, observe.ProcessRSSBytes: prom},
		},
	})
	if res.Ticks != 12 || res.Step != time.Second {
		t.Errorf("%d sample times at %v, want 12 at 1s", res.Ticks, res.Step)
	}
	// the window is (start, end]: Prometheus' step at start is out, so 11
	if s := res.CPU.Summed; s.N != 11 || s.Max != 3 || s.Avg != 3 {
		t.Errorf("summed CPU series: %d samples, max %g, avg %g; want 11, 3, 3", s.N, s.Max, s.Avg)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
}
