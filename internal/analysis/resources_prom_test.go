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
