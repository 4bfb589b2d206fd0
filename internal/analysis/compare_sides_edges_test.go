package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// TestMinRunEffectGuardsSayFivePercent: the warning each guard adds says
// what difference it hides, in percent.
func TestMinRunEffectGuardsSayFivePercent(t *testing.T) {
	r := Ratio{A: 1, B: 1.03, Value: 1.03, Low: 1.02, High: 1.04, Significance: Significant}
	c := Comparison{What: CompareCPU, Ratio: r, Phrase: r.Phrase(CompareCPU)}
	for name, g := range map[string]Comparison{"OneInvocationGuard": OneInvocationGuard(c, "B"), "SideBySideGuard": SideBySideGuard(c)} {
		if g.Phrase != "~" || len(g.Ratio.Warnings) != 1 || !strings.Contains(g.Ratio.Warnings[0], "a difference under 5 % is shown as ~") {
			t.Errorf("%s of 3 %% more: %q %q", name, g.Phrase, g.Ratio.Warnings)
		}
	}
}

// errorRuns is one run per count of failures, each of one 1 s interval
// of `requests` requests; a run of 0 requests has no requests at all.
func errorRuns(requests int64, failed ...int64) [][]*stats.Interval {
	t0 := time.Unix(1000, 0)
	var runs [][]*stats.Interval
	for _, f := range failed {
		st := stats.NewOpStats()
		if requests > 0 {
			st.Classes[stats.OK], st.Classes[stats.Status5xx] = requests-f, f
		}
		runs = append(runs, []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}}})
	}
	return runs
}

// TestErrorRateAtTheRunEffectEdge: with one run per side, error rates 5 %
// apart exactly (105 against 100 failures of 400 requests, either way) are
// a difference, as the other one-run comparisons' edge is; under 5 % they
// are "~" with a warning that says so.
func TestErrorRateAtTheRunEffectEdge(t *testing.T) {
	for _, tt := range []struct {
		a, b   int64 // failures of 400
		phrase string
	}{
		{100, 105, "x1.05 higher error rate (no CI)"},
		{105, 100, "x1.05 lower error rate (no CI)"},
		{100, 104, "~"},
		{104, 100, "~"},
	} {
		c := CompareErrorRate("workload get", errorRuns(400, tt.a), errorRuns(400, tt.b))
		within := slices.ContainsFunc(c.Ratio.Warnings, func(w string) bool { return strings.Contains(w, "error rates within 5 % of each other") })
		if c.Phrase != tt.phrase || within != (tt.phrase == "~") {
			t.Errorf("%d against %d failures of 400: %q, warnings %q; want %q", tt.a, tt.b, c.Phrase, c.Ratio.Warnings, tt.phrase)
		}
	}
}

// TestErrorRateOfOneRunAgainstSeveral: a side of one run (or of several
// of which only one had requests: a run without requests has no error
// rate) gives no interval, so the ratio is the point estimate of the
// runs' mean rates, marked "(no CI)", with the runs counted that had one.
func TestErrorRateOfOneRunAgainstSeveral(t *testing.T) {
	for _, tt := range []struct {
		name   string
		a, b   [][]*stats.Interval
		na, nb int
		phrase string
	}{
		{"one run against two", errorRuns(1000, 100), errorRuns(1000, 190, 210), 1, 2, "x2.0 higher error rate (no CI)"},
		{"two runs against one", errorRuns(1000, 190, 210), errorRuns(1000, 100), 2, 1, "x2.0 lower error rate (no CI)"},
		{"a run without requests", append(errorRuns(1000, 100), errorRuns(0, 0)...), errorRuns(1000, 200), 1, 1, "x2.0 higher error rate (no CI)"},
	} {
		c := CompareErrorRate("workload get", tt.a, tt.b)
		if c.Phrase != tt.phrase || c.Ratio.NA != tt.na || c.Ratio.NB != tt.nb || c.Ratio.Significance != NoInterval {
			t.Errorf("%s: %q, %d and %d runs, %v (%+v); want %q of %d and %d", tt.name, c.Phrase, c.Ratio.NA, c.Ratio.NB, c.Ratio.Significance, c.Ratio, tt.phrase, tt.na, tt.nb)
		}
	}
}

// TestCompareResourceLeavesOutRunsWithoutSamples: a run that has no
// sample of the resource is no run of the comparison: the others' means
// are compared.
func TestCompareResourceLeavesOutRunsWithoutSamples(t *testing.T) {
	c := CompareResource("target", CompareMemory, [][]float64{{10, 10}, {11}, {9}, nil}, [][]float64{{5}, {5.5}, {4.5}}, DefaultBootstrap())
	if c.Phrase != "x2.0 less memory" || c.Ratio.NA != 3 || c.Ratio.NB != 3 {
		t.Errorf("a run without samples on A: %q, %d and %d runs (%+v)", c.Phrase, c.Ratio.NA, c.Ratio.NB, c.Ratio)
	}
}

// TestIntervalRates: each interval's requests over its length; an
// interval of no length has no rate.
func TestIntervalRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := func(from, to time.Duration, requests int64) *stats.Interval {
		st := stats.NewOpStats()
		st.Classes[stats.OK], st.Classes[stats.Status5xx] = requests-10, 10
		return &stats.Interval{Start: t0.Add(from), End: t0.Add(to), Ops: map[string]*stats.OpStats{"GET /": st, "PUT /": st}}
	}
	ivs := []*stats.Interval{iv(0, time.Second, 100), iv(time.Second, time.Second, 50), iv(time.Second, 3*time.Second, 100), iv(3*time.Second, 3500*time.Millisecond, 30)}
	if got := IntervalRates(ivs); !slices.Equal(got, []float64{200, 100, 120}) {
		t.Errorf("rates %v, want 200, 100 and 120 requests/s", got)
	}
}
