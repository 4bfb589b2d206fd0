package analysis

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

func TestResourceSamples(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	series := map[string]map[string][]Point{
		"a": {"cpu_cores": {{at(1), 1}, {at(2), 2}, {at(3), 3}}, "process_cpu_cores": {{at(1), 9}}},
		"b": {"process_cpu_cores": {{at(2), 10}, {at(3), 20}, {at(4), 30}}},
	}
	w := Window{Start: t0, End: at(4)}
	// a from cpu_cores (preferred), b from process_cpu_cores; summed at the times both have: 2 and 3.
	if got := ResourceSamples(series, w, []string{"a", "b"}, CompareCPU); !slices.Equal(got, []float64{12, 23}) {
		t.Errorf("summed CPU %v", got)
	}
	if got := ResourceSamples(series, w, []string{"b"}, CompareCPU); !slices.Equal(got, []float64{10, 20, 30}) {
		t.Errorf("b CPU %v", got)
	}
	if got := ResourceSamples(series, w, []string{"a", "b"}, CompareMemory); got != nil {
		t.Errorf("memory of components without memory samples: %v", got)
	}
}

// TestCompareDeclared: the disk observer's metric is compared as "disk",
// in bytes, after CPU and memory.
func TestCompareDeclared(t *testing.T) {
	if got := CompareResources(); !slices.Equal(got, []string{CompareCPU, CompareMemory, "disk"}) {
		t.Errorf("CompareResources() = %v", got)
	}
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	series := map[string]map[string][]Point{"a": {"disk_bytes": {{t0.Add(time.Second), 5}, {t0.Add(2 * time.Second), 7}}}}
	if got := ResourceSamples(series, Window{Start: t0, End: t0.Add(2 * time.Second)}, []string{"a"}, "disk"); !slices.Equal(got, []float64{5, 7}) {
		t.Errorf("disk samples %v", got)
	}
	c := CompareResource("a", "disk", [][]float64{{10}, {10}, {10}}, [][]float64{{20}, {20}, {20}}, DefaultBootstrap())
	if c.Unit != "bytes" || c.Phrase != "x2.0 more disk" {
		t.Errorf("disk comparison %+v", c)
	}
}

// jittered is n samples around m, ±2 %.
func jittered(rng *rand.Rand, m float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = m * (0.98 + 0.04*rng.Float64())
	}
	return out
}

func TestCompareResource(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := jittered(rng, 0.3, 40), jittered(rng, 0.6, 40)
	c := CompareResource("target", CompareCPU, [][]float64{a}, [][]float64{b}, DefaultBootstrap())
	if c.Phrase != "x2.0 more CPU" || c.Ratio.Low <= 1 || c.Unit != "cores" {
		t.Errorf("double CPU: %+v", c)
	}
	// 3 % more: the interval excludes 1 with 40 tight samples, but one run per side can't support it.
	b = jittered(rng, 0.309, 40)
	c = CompareResource("target", CompareCPU, [][]float64{a}, [][]float64{b}, DefaultBootstrap())
	if c.Phrase != "~" || len(c.Ratio.Warnings) != 1 || !strings.Contains(c.Ratio.Warnings[0], "under 5 %") {
		t.Errorf("3 %% more from one run each: %+v", c)
	}
	// Repeated runs: the runs' means, by Fieller's interval.
	c = CompareResource("target", CompareMemory, [][]float64{{10, 10}, {11}, {9}}, [][]float64{{5}, {5.5}, {4.5}}, DefaultBootstrap())
	if c.Phrase != "x2.0 less memory" || c.Ratio.NA != 3 || !strings.HasPrefix(c.Ratio.Method, "Fieller") {
		t.Errorf("repeated runs: %+v", c)
	}
}

func TestCompareQuantileAndRates(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	run := func(lat time.Duration, perSec int) []*stats.Interval {
		var ivs []*stats.Interval
		for i := range 36 {
			st := stats.NewOpStats()
			for k := range perSec {
				st.Latency.Record(lat + time.Duration(k%10)*lat/100)
			}
			st.Classes[stats.OK] = int64(perSec)
			ivs = append(ivs, &stats.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
				Ops: map[string]*stats.OpStats{"GET": st}})
		}
		return ivs
	}
	a, b := run(10*time.Millisecond, 200), run(30*time.Millisecond, 200)
	c := CompareQuantile("workload get", 0.99, [][]*stats.Hist{IntervalLatencies(a)}, [][]*stats.Hist{IntervalLatencies(b)}, DefaultBootstrap())
	if c.What != "p99 latency" || c.Phrase != "x3.0 higher p99 latency" {
		t.Errorf("p99: %+v", c)
	}
	r := CompareRate("workload get", [][]float64{IntervalRates(a)}, [][]float64{IntervalRates(b)}, DefaultBootstrap())
	if r.Phrase != "~" || r.Ratio.Value != 1 {
		t.Errorf("rate: %+v", r)
	}
	if w := InWindow(a, Window{Start: t0.Add(time.Second), End: t0.Add(3 * time.Second)}); len(w) != 2 {
		t.Errorf("%d intervals in a 2 s window", len(w))
	}
}

// TestOneInvocationGuard: three repetitions of one run each side, 2.4 %
// apart with a tight interval (as two runs of the same work made at
// different times were in CI), are "~"; twice the CPU stays a difference.
func TestOneInvocationGuard(t *testing.T) {
	small := CompareResource("heavy", CompareCPU, [][]float64{{0.410}, {0.412}, {0.409}}, [][]float64{{0.400}, {0.401}, {0.399}}, DefaultBootstrap())
	if small.Phrase == "~" {
		t.Fatalf("the test needs a ratio the runs' interval supports: %+v", small)
	}
	g := OneInvocationGuard(small, "A")
	if g.Phrase != "~" || g.Ratio.Significance != NotSignificant || !strings.Contains(g.Ratio.Warnings[len(g.Ratio.Warnings)-1], "A's runs are the repetitions of one run") {
		t.Errorf("2.4 %% from one invocation a side: %+v", g)
	}
	big := CompareResource("light", CompareCPU, [][]float64{{0.2}, {0.21}, {0.19}}, [][]float64{{0.4}, {0.41}, {0.39}}, DefaultBootstrap())
	if g := OneInvocationGuard(big, "A"); g.Phrase != "x2.0 more CPU" || g.Ratio.Significance != Significant {
		t.Errorf("twice the CPU: %+v", g)
	}
}

// TestSideBySideGuard: two systems compared over three repetitions, 2.4 %
// apart in each (as two built-in targets of the same work were in CI),
// are "~" with a warning that says why; twice the CPU stays a difference
// and a wide "~" gains no warning.
func TestSideBySideGuard(t *testing.T) {
	small := CompareResource("components", CompareCPU, [][]float64{{0.300}, {0.301}, {0.299}}, [][]float64{{0.307}, {0.308}, {0.306}}, DefaultBootstrap())
	if small.Phrase == "~" {
		t.Fatalf("the test needs a ratio the repetitions' interval supports: %+v", small)
	}
	g := SideBySideGuard(small)
	if g.Phrase != "~" || g.Ratio.Significance != NotSignificant || len(g.Ratio.Warnings) == 0 ||
		!strings.Contains(g.Ratio.Warnings[len(g.Ratio.Warnings)-1], "two systems side by side differ by a few percent") {
		t.Errorf("2.4 %% side by side: %+v", g)
	}
	big := CompareResource("components", CompareCPU, [][]float64{{0.15}, {0.16}, {0.15}}, [][]float64{{0.3}, {0.31}, {0.29}}, DefaultBootstrap())
	if g := SideBySideGuard(big); g.Phrase != "x2.0 more CPU" || g.Ratio.Significance != Significant {
		t.Errorf("twice the CPU: %+v", g)
	}
	wide := CompareResource("components", CompareCPU, [][]float64{{0.2}, {0.4}, {0.3}}, [][]float64{{0.3}, {0.2}, {0.31}}, DefaultBootstrap())
	if g := SideBySideGuard(wide); g.Phrase != "~" || len(g.Ratio.Warnings) != len(wide.Ratio.Warnings) {
		t.Errorf("an interval that includes 1: %+v", g)
	}
}

// TestMinRunEffectGuardsAtTheEdge: each of the three guards turns a
// significant ratio into "~" just inside 1 ± MinRunEffect (1/1.05 to
// 1.05), on either side of 1, and leaves one just outside it as the
// difference it is: a guard loosened or tightened either way fails here.
func TestMinRunEffectGuardsAtTheEdge(t *testing.T) {
	guards := map[string]func(Comparison) Comparison{
		"OneRunGuard": func(c Comparison) Comparison {
			c.Ratio = OneRunGuard(c.Ratio)
			c.Phrase = c.Ratio.Phrase(c.What)
			return c
		},
		"OneInvocationGuard": func(c Comparison) Comparison { return OneInvocationGuard(c, "A") },
		"SideBySideGuard":    SideBySideGuard,
	}
	for _, tt := range []struct {
		value  float64
		phrase string // "~" when the guard must hide the difference
	}{
		{1.049, "~"},
		{1.051, "x1.05 more CPU"},
		{1.05, "x1.05 more CPU"}, // 5 % exactly is not under 5 %
		{1 / 1.05, "x1.05 less CPU"},
		{1 / 1.049, "~"},
		{0.951, "x1.05 less CPU"}, // 5.2 % less: 0.951 < 1/1.05 = 0.9524, though above 1 − 0.05
		{1.5, "x1.5 more CPU"},
		{1 / 1.5, "x1.5 less CPU"},
	} {
		r := Ratio{A: 1, B: tt.value, Value: tt.value, Low: tt.value * 0.99, High: tt.value * 1.01, Significance: Significant}
		for name, guard := range guards {
			c := guard(Comparison{What: CompareCPU, Ratio: r, Phrase: r.Phrase(CompareCPU)})
			if c.Phrase != tt.phrase || (c.Ratio.Significance == Significant) != (tt.phrase != "~") || (len(c.Ratio.Warnings) > 0) != (tt.phrase == "~") {
				t.Errorf("%s of a significant %v: %q, %v, warnings %q; want %q", name, tt.value, c.Phrase, c.Ratio.Significance, c.Ratio.Warnings, tt.phrase)
			}
		}
	}
}

// TestOneRunErrorRateWithinTheRunEffect: one run per side gives the error
// rates no interval, so the ratio is a point estimate marked "(no CI)";
// but two runs of the same system commonly differ by a few percent, and
// a difference under MinRunEffect, or none at all, is no "higher error
// rate": it is "~", as any other one-run comparison within it is.
func TestOneRunErrorRateWithinTheRunEffect(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// each interval 1000 requests, failures of 1 in every failEvery
	run := func(failed int64) [][]*stats.Interval {
		var ivs []*stats.Interval
		for i := range 4 {
			st := stats.NewOpStats()
			st.Classes[stats.OK], st.Classes[stats.Status5xx] = 1000-failed, failed
			ivs = append(ivs, &stats.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
				Ops: map[string]*stats.OpStats{"GET /": st}})
		}
		return [][]*stats.Interval{ivs}
	}
	for _, tt := range []struct {
		name   string
		a, b   int64 // failures per 1000
		phrase string
	}{
		{"the same error rate", 100, 100, "~"},
		{"3 % more errors", 100, 103, "~"},
		{"3 % fewer errors", 103, 100, "~"},
		{"twice the errors", 100, 200, "x2.0 higher error rate (no CI)"},
		{"half the errors", 200, 100, "x2.0 lower error rate (no CI)"},
	} {
		c := CompareErrorRate("workload get", run(tt.a), run(tt.b))
		if c.Phrase != tt.phrase {
			t.Errorf("%s: %q, want %q (%+v)", tt.name, c.Phrase, tt.phrase, c.Ratio)
		}
	}
}
