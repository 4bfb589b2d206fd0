package results

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func addComponents(t testing.TB, r *Run, cell int, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := r.AddComponent(Component{Cell: cell, Name: n, Kind: KindRun}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	r := newRunT(t)
	addComponents(t, r, 0, "db", "api")
	addComponents(t, r, 1, "db")
	t0 := testStart
	ticks := []struct {
		cell   int
		t      time.Time
		points map[string][]Sample
	}{
		{0, t0, map[string][]Sample{"db": {{"rss_bytes", 100}}, "api": {{"rss_bytes", 10}, {"cpu_cores", math.NaN()}}}},
		{0, t0.Add(time.Second), map[string][]Sample{"db": {{"rss_bytes", 101}, {"cpu_cores", 0.5}}, "api": {{"rss_bytes", 11}}}},
		{1, t0.Add(time.Second), map[string][]Sample{"db": {{"rss_bytes", 7}, {"metric:x_total", math.Inf(1)}}}},
		{0, t0.Add(2 * time.Second), map[string][]Sample{"db": {{"rss_bytes", 102}, {"cpu_cores", 1.5}}}},
		{0, t0.Add(3 * time.Second), map[string][]Sample{}},
	}
	for _, tk := range ticks {
		if err := r.WriteSamples(tk.cell, tk.t, tk.points); err != nil {
			t.Fatal(err)
		}
	}
	r2 := reopen(t, r)
	p := func(sec int, v float64) TimePoint {
		return TimePoint{T: t0.Add(time.Duration(sec) * time.Second), V: v}
	}
	want := map[int]map[string]map[string][]TimePoint{
		0: {
			"db":  {"rss_bytes": {p(0, 100), p(1, 101), p(2, 102)}, "cpu_cores": {p(1, 0.5), p(2, 1.5)}},
			"api": {"rss_bytes": {p(0, 10), p(1, 11)}}, // NaN not stored
		},
		1: {"db": {"rss_bytes": {p(1, 7)}}}, // +Inf not stored
		2: {},
	}
	for cell, w := range want {
		got, err := r2.Samples(cell)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Samples(%d) =\n%v\nwant\n%v", cell, got, w)
		}
	}
}

// TestWriteSamplesIsAtomic checks that a tick with a bad component or
// metric stores nothing, and that a metric name first seen in a failed tick
// is stored correctly later.
func TestWriteSamplesIsAtomic(t *testing.T) {
	r := newRunT(t)
	addComponents(t, r, 0, "a", "b")
	t0 := testStart
	bad := []struct {
		points map[string][]Sample
		err    string
	}{
		{map[string][]Sample{"a": {{"new_metric", 1}}, "zz": {{"rss_bytes", 1}}}, `unknown component "zz" in cell 0`},
		{map[string][]Sample{"a": {{"new_metric", 1}, {"new_metric", 2}}}, `metric "new_metric" given twice`},
		{map[string][]Sample{"b": {{"", 1}}}, "empty metric name"},
	}
	for _, tt := range bad {
		err := r.WriteSamples(0, t0, tt.points)
		if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "cannot write samples") {
			t.Errorf("WriteSamples(%v): err = %v, want one containing %q", tt.points, err, tt.err)
		}
	}
	if err := r.WriteSamples(3, t0, map[string][]Sample{"a": {{"rss_bytes", 1}}}); err == nil {
		t.Error("WriteSamples accepted a component of another cell")
	}
	if got, err := r.Samples(0); err != nil || len(got) != 0 {
		t.Fatalf("after failed ticks: samples %v, %v; want none", got, err)
	}
	ok := map[string][]Sample{"a": {{"new_metric", 1}}, "b": {{"new_metric", 2}, {"rss_bytes", 3}}}
	if err := r.WriteSamples(0, t0, ok); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteSamples(0, t0, ok); err == nil {
		t.Error("WriteSamples accepted the same tick twice")
	}
	got, err := reopen(t, r).Samples(0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]TimePoint{
		"a": {"new_metric": {{t0, 1}}},
		"b": {"new_metric": {{t0, 2}}, "rss_bytes": {{t0, 3}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples = %v, want %v", got, want)
	}
}

// TestSamplesThroughTwoHandles writes samples through one handle and a
// component and samples through a second one, as a merge would.
func TestSamplesThroughTwoHandles(t *testing.T) {
	r := newRunT(t)
	addComponents(t, r, 0, "a")
	if err := r.WriteSamples(0, testStart, map[string][]Sample{"a": {{"cpu_cores", 1}}}); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	addComponents(t, r2, 0, "b")
	if err := r2.WriteSamples(0, testStart, map[string][]Sample{"a": {{"rss_bytes", 5}}, "b": {{"cpu_cores", 2}}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Samples(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got["a"]) != 2 || got["b"]["cpu_cores"][0].V != 2 {
		t.Errorf("samples = %v", got)
	}
}

// Ten components with fifteen metrics each, sampled every second: the size
// the format spec's figures are for.
const (
	benchComponents = 10
	benchMetrics    = 15
)

func benchTick(i int) map[string][]Sample {
	points := make(map[string][]Sample, benchComponents)
	for c := range benchComponents {
		ss := make([]Sample, benchMetrics)
		for m := range ss {
			ss[m] = Sample{Metric: fmt.Sprintf("metric_%02d", m), Value: float64(i*m + c)}
		}
		points[fmt.Sprintf("component-%d", c)] = ss
	}
	return points
}

func benchRun(b *testing.B) *Run {
	b.Helper()
	r, err := Create(b.TempDir(), testMeta())
	if err != nil {
		b.Fatal(err)
	}
	for c := range benchComponents {
		addComponents(b, r, 0, fmt.Sprintf("component-%d", c))
	}
	return r
}

// BenchmarkWriteSamples measures one sample tick of 10 components × 15
// metrics: one committed transaction of 150 rows.
func BenchmarkWriteSamples(b *testing.B) {
	r := benchRun(b)
	defer r.Close()
	tick := benchTick(1)
	t0 := time.Unix(1_700_000_000, 0)
	i := 0
	for b.Loop() {
		if err := r.WriteSamples(0, t0.Add(time.Duration(i)*time.Second), tick); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(benchComponents*benchMetrics), "ns/sample")
}

// BenchmarkReadSamples reads a 75-minute cell sampled every second: 4,500
// ticks × 150 values = 675,000 rows.
func BenchmarkReadSamples(b *testing.B) {
	r := benchRun(b)
	defer r.Close()
	t0 := time.Unix(1_700_000_000, 0)
	const ticks = 75 * 60
	for i := range ticks {
		if err := r.WriteSamples(0, t0.Add(time.Duration(i)*time.Second), benchTick(i)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		got, err := r.Samples(0)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(got["component-3"]["metric_07"]); n != ticks {
			b.Fatalf("%d points, want %d", n, ticks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(ticks*benchComponents*benchMetrics), "ns/row")
}
