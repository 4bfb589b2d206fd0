package analysis

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// TestNamedMetrics: the metrics a plan lists reach the component's
// figures by name; a counter (stored as one, or an older run's "_total")
// as its rate per second over the window, not its cumulative value, with
// a restart leaving out one sample; a gauge as sampled.
func TestNamedMetrics(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	var reqs, old, queue []Point
	for i := 0; i <= 20; i++ {
		v := 1000 + 50*float64(i) // 50/s
		if i >= 15 {
			v = 10 * float64(i-14) // restarted at 15: 10, then 10/s
		}
		reqs = append(reqs, Point{at(i), v})
		old = append(old, Point{at(i), 4 * float64(i*i)}) // 4i² grows by 4(2i−1) per second
		queue = append(queue, Point{at(i), float64(i % 3)})
	}
	res := SummarizeResources(ResourceInput{
		Window:     Window{Start: at(0), End: at(20)},
		Components: []Component{{Name: "app"}},
		Series: map[string]map[string][]Point{"app": {observe.CounterPrefix + "reqs_total": reqs, observe.MetricPrefix + "old_total": old,
			observe.MetricPrefix + "queue": queue, observe.CPUCores: queue}},
	})
	got := map[string]NamedMetric{}
	for _, m := range res.Components[0].Named {
		got[m.Name] = m
	}
	if len(got) != 3 {
		t.Fatalf("named metrics %+v", res.Components[0].Named)
	}
	// reqs: 20 intervals in the window, one of them the restart: 14 at 50/s, 5 at 10/s.
	if r := got["reqs_total"]; !r.Counter || r.Stat.N != 19 || r.Stat.Max != 50 || r.Stat.P99 != 50 || !near(r.Stat.Avg, (14*50+5*10)/19.0) {
		t.Errorf("reqs_total %+v", r)
	}
	// old_total: 4(2i−1) for i = 1…20: max 156, mean 4 × 20 = 80.
	if o := got["old_total"]; !o.Counter || o.Stat.N != 20 || o.Stat.Max != 156 || !near(o.Stat.Avg, 80) {
		t.Errorf("old_total %+v", o)
	}
	// queue, a gauge: i mod 3 over samples 1…20 (the window leaves out its start).
	if q := got["queue"]; q.Counter || q.Stat.N != 20 || q.Stat.Max != 2 {
		t.Errorf("queue %+v", q)
	}
}

// A counter's rate at its edges: sampled every 2 s (a Prometheus step),
// the growth is per second, not per sample; an interval in which the
// counter did not move is a rate of 0, counted; a sample stored twice at
// the same time adds no rate (there is no time to divide by).
func TestCounterRateEdges(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tt := range []struct {
		name     string
		ps       []Point
		n        int
		avg, max float64
	}{
		{"every 2 s, 100 a sample", []Point{{at(0), 0}, {at(2), 100}, {at(4), 200}, {at(6), 300}}, 3, 50, 50},
		{"idle, then 30/s", []Point{{at(0), 7}, {at(1), 7}, {at(2), 7}, {at(3), 37}, {at(4), 67}}, 4, 15, 30},
		{"a sample stored twice", []Point{{at(0), 0}, {at(1), 10}, {at(1), 10}, {at(2), 20}}, 2, 10, 10},
	} {
		res := SummarizeResources(ResourceInput{
			Window:     Window{Start: at(0), End: at(10)},
			Components: []Component{{Name: "app"}},
			Series:     map[string]map[string][]Point{"app": {observe.CounterPrefix + "reqs_total": tt.ps}},
		})
		named := res.Components[0].Named
		if len(named) != 1 {
			t.Fatalf("%s: named metrics %+v", tt.name, named)
		}
		if s := named[0].Stat; !named[0].Counter || s.N != tt.n || !near(s.Avg, tt.avg) || s.Max != tt.max {
			t.Errorf("%s: reqs_total %+v; want %d rates, mean %g/s, max %g/s", tt.name, named[0], tt.n, tt.avg, tt.max)
		}
	}
}
