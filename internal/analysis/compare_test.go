package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// Fieller references in plain Python (tq is the bisected t quantile of
// TestTQuantile's comment):
//
//	ma, mb = mean(a), mean(b); va, vb = var(a)/na, var(b)/nb   (var with n-1)
//	r = mb/ma; dof = (vb + r²va)² / (vb²/(nb-1) + (r²va)²/(na-1)); t = tq(0.975, dof)
//	q = ma² - t²va; d = sqrt(ma²mb² - q(mb² - t²vb)); interval (ma mb ∓ d)/q
func TestCompareRuns(t *testing.T) {
	tests := []struct {
		name          string
		a, b          []float64
		value, lo, hi float64
		sig           Significance
		phrase        string
	}{
		// dof 5.332390313305621, t 2.52312629077565
		{"B half of A", []float64{10, 11, 9, 10.5}, []float64{5, 5.5, 4.8, 5.2},
			0.5061728395061729, 0.44588279411469983, 0.5780540718192515, Significant, "x2.0 less CPU"},
		// dof 2.973679717235746, t 3.198441087671193
		{"about the same", []float64{10, 11, 9}, []float64{10.5, 9.5, 10.2},
			1.0066666666666666, 0.8269480148990872, 1.25746394260492, NotSignificant, "~"},
	}
	for _, tt := range tests {
		r := CompareRuns(tt.a, tt.b)
		if !closeTo(r.Value, tt.value, 1e-12) || !closeTo(r.Low, tt.lo, 1e-7) || !closeTo(r.High, tt.hi, 1e-7) || r.Significance != tt.sig {
			t.Errorf("%s: %v in [%v, %v] %v, want %v in [%v, %v] %v", tt.name, r.Value, r.Low, r.High, r.Significance, tt.value, tt.lo, tt.hi, tt.sig)
		}
		if got := r.Phrase("CPU"); got != tt.phrase {
			t.Errorf("%s: phrase %q, want %q", tt.name, got, tt.phrase)
		}
	}
}

func TestCompareRunsLimits(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		warn string
		sig  Significance
	}{
		{"identical runs", []float64{3, 4, 5}, []float64{3, 4, 5}, "", NotSignificant},
		{"one run", []float64{3}, []float64{6, 6.1}, "1 and 2 runs: an interval needs at least 2 runs on each side", NotSignificant},
		{"no spread", []float64{2, 2}, []float64{3, 3}, "every run on each side gave the same figure", Significant},
		{"A near 0", []float64{-1, 1, 0.5}, []float64{3, 4, 5}, "A's mean 0.1667 is not significantly above 0: the interval is unbounded", NotSignificant},
		{"A is 0", []float64{0, 0}, []float64{3, 4}, "a ratio needs a positive A", NotSignificant},
	}
	for _, tt := range tests {
		r := CompareRuns(tt.a, tt.b)
		var want []string
		if tt.warn != "" {
			want = []string{tt.warn}
		}
		checkWarnings(t, tt.name, r.Warnings, want)
		if r.Significance != tt.sig {
			t.Errorf("%s: %v, want %v", tt.name, r.Significance, tt.sig)
		}
	}
}

// noisy is n samples of level × (1 + AR(1) noise), deterministic.
func noisy(n int, level float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	e := 0.0
	for i := range out {
		e = 0.7*e + 0.05*rng.NormFloat64()
		out[i] = level * (1 + e)
	}
	return out
}

func TestCompareSeries(t *testing.T) {
	a := noisy(300, 1.5, 1)
	same := CompareSeries(a, a, DefaultBootstrap())
	if same.Value != 1 || same.Significance != NotSignificant || same.Phrase("CPU") != "~" || !(same.Low < 1 && same.High > 1) {
		t.Errorf("identical: %+v", same)
	}
	b := scaled(noisy(300, 1.5, 2), 2)
	r := CompareSeries(a, b, DefaultBootstrap())
	if math.Abs(r.Value-2) > 0.05 || !(r.Low > 1.8 && r.High < 2.2 && r.Low < r.Value && r.Value < r.High) || r.Significance != Significant {
		t.Errorf("B = 2A: %v in [%v, %v] %v", r.Value, r.Low, r.High, r.Significance)
	}
	if got := r.Phrase("memory"); got != "x2.0 more memory" {
		t.Errorf("phrase %q", got)
	}
	if got := r.Inverse().Phrase("memory"); got != "x2.0 less memory" {
		t.Errorf("inverse phrase %q", got)
	}
	// The seed fixes the interval: these are this implementation's figures,
	// pinned so that a change to the resampling shows.
	if r.Low != 1.9723621859009008 || r.High != 2.0981955328217183 {
		t.Errorf("seed 1 gave [%v, %v], want [1.9723621859009008, 2.0981955328217183]", r.Low, r.High)
	}
	again := CompareSeries(a, b, DefaultBootstrap())
	if again.Low != r.Low || again.High != r.High {
		t.Errorf("not deterministic: [%v, %v] then [%v, %v]", r.Low, r.High, again.Low, again.High)
	}
	other := CompareSeries(a, b, BootstrapOptions{Resamples: 2000, Seed: 2})
	if other.Low == r.Low && other.High == r.High {
		t.Error("the seed makes no difference")
	}
	few := CompareSeries(a[:29], b, DefaultBootstrap())
	checkWarnings(t, "few", few.Warnings, []string{"29 and 300 samples: an interval needs at least 30 on each side"})
	if few.Significance != NotSignificant || few.Phrase("CPU") != "~" {
		t.Errorf("few samples: %+v", few)
	}
}

func TestPhrase(t *testing.T) {
	tests := []struct {
		r    Ratio
		want string
	}{
		{Ratio{Value: 1 / 1.7, Significance: Significant}, "x1.7 less CPU"},
		{Ratio{Value: 5.04, Significance: Significant}, "x5.0 more CPU"},
		{Ratio{Value: 1.03, Significance: Significant}, "x1.03 more CPU"},
		{Ratio{Value: 12.4, Significance: Significant}, "x12 more CPU"},
		{Ratio{Value: 2, Significance: NoInterval}, "x2.0 more CPU (no CI)"},
		{Ratio{Value: 2, Significance: NotSignificant}, "~"},
		{Ratio{Value: math.NaN(), Significance: Significant}, "~"},
		// B used none: not "~" (there is a difference) nor "x+Inf".
		{Ratio{Value: 0, Low: 0, High: 0, Significance: Significant}, "x∞ less CPU"},
		// Equal figures of one run each: no difference to phrase.
		{Ratio{Value: 1, Significance: NoInterval}, "~"},
	}
	for _, tt := range tests {
		if got := tt.r.Phrase("CPU"); got != tt.want {
			t.Errorf("%v %v: %q, want %q", tt.r.Value, tt.r.Significance, got, tt.want)
		}
	}
	r := Ratio{Value: 0.5, Low: 0.4, High: 0.625, Significance: Significant}
	if inv := r.Inverse(); inv.Value != 2 || inv.Low != 1.6 || inv.High != 2.5 {
		t.Errorf("inverse %+v", inv)
	}
	if got := (Ratio{Value: 2, Significance: Significant}).PhraseWith("lower", "higher", "p99 latency"); got != "x2.0 higher p99 latency" {
		t.Errorf("PhraseWith %q", got)
	}
}

// latencyIntervals is n interval histograms of 200 latencies each around
// base, spread ±20 % and drifting slowly, deterministic.
func latencyIntervals(n int, base time.Duration, seed uint64) []*stats.Hist {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]*stats.Hist, n)
	for i := range out {
		h := stats.NewHist()
		drift := 1 + 0.1*math.Sin(float64(i)/5)
		for range 200 {
			h.Record(time.Duration(float64(base) * drift * (0.8 + 0.4*rng.Float64())))
		}
		out[i] = h
	}
	return out
}

func TestCompareLatency(t *testing.T) {
	a := latencyIntervals(100, 10*time.Millisecond, 1)
	b := latencyIntervals(100, 20*time.Millisecond, 2)
	c := CompareLatency(LatencySide{Intervals: a}, LatencySide{Intervals: b}, 0.99, DefaultBootstrap())
	r := c.Ratio
	if math.Abs(r.Value-2) > 0.1 || !(r.Low > 1.5 && r.High < 2.5 && r.Low <= r.Value && r.Value <= r.High) || r.Significance != Significant {
		t.Errorf("B = 2A: p99 %v vs %v, %v in [%v, %v] %v", c.A, c.B, r.Value, r.Low, r.High, r.Significance)
	}
	if got := r.PhraseWith("lower", "higher", "p99 latency"); got != "x2.0 higher p99 latency" {
		t.Errorf("phrase %q", got)
	}
	same := CompareLatency(LatencySide{Intervals: a}, LatencySide{Intervals: a}, 0.5, DefaultBootstrap())
	if same.Ratio.Value != 1 || same.Ratio.Significance != NotSignificant {
		t.Errorf("identical: %+v", same.Ratio)
	}
	again := CompareLatency(LatencySide{Intervals: a}, LatencySide{Intervals: b}, 0.99, DefaultBootstrap())
	if again.Ratio.Low != r.Low || again.Ratio.High != r.High {
		t.Error("not deterministic")
	}
	merged := func(hs []*stats.Hist) *stats.Hist {
		m := stats.NewHist()
		for _, h := range hs {
			m.Merge(h)
		}
		return m
	}
	m := CompareLatency(LatencySide{Merged: merged(a)}, LatencySide{Merged: merged(b)}, 0.99, DefaultBootstrap())
	if m.A != c.A || m.B != c.B || m.Ratio.Significance != NoInterval || !math.IsNaN(m.Ratio.Low) || m.Ratio.Phrase("") != "x2.0 more (no CI)" {
		t.Errorf("merged only: %+v", m)
	}
	few := CompareLatency(LatencySide{Intervals: a[:20]}, LatencySide{Intervals: b}, 0.99, DefaultBootstrap())
	checkWarnings(t, "few intervals", few.Ratio.Warnings, []string{"20 and 100 intervals (4 and 10 batches)"})
	sparse := CompareLatency(LatencySide{Merged: latencyIntervals(1, time.Millisecond, 3)[0]}, LatencySide{Merged: merged(b)}, 0.999, DefaultBootstrap())
	checkWarnings(t, "few latencies", sparse.Ratio.Warnings, []string{"200 and 20000 latencies: p99.9 needs at least 1000 on each side"})
	if few.Ratio.Significance != NotSignificant || sparse.Ratio.Significance != NotSignificant {
		t.Errorf("few: %v, sparse: %v", few.Ratio.Significance, sparse.Ratio.Significance)
	}
}

func TestMinCountFor(t *testing.T) {
	for q, want := range map[float64]int64{0.5: 2, 0.9: 10, 0.99: 100, 0.999: 1000, 1: math.MaxInt64} {
		if got := MinCountFor(q); got != want {
			t.Errorf("MinCountFor(%v) = %d, want %d", q, got, want)
		}
	}
}

func TestPercentileInterval(t *testing.T) {
	rs := seq(1, 2000)
	slices.Reverse(rs)
	if lo, hi := percentileInterval(rs); lo != 51 || hi != 1950 {
		t.Errorf("1…2000: [%v, %v], want [51, 1950]", lo, hi)
	}
}

// TestCompareLatencyAtItsEdges (issue 18): the fewest latencies a quantile
// is given for, the fewest batches and the fewest resamples an interval is
// given for, each exactly, give an interval by bootstrap and no warning.
func TestCompareLatencyAtItsEdges(t *testing.T) {
	side := func(base time.Duration) []*stats.Hist {
		out := make([]*stats.Hist, 25) // ⌈√25⌉ = 5 batches of 5, MinLatencyBatches
		for i := range out {
			out[i] = stats.NewHist()
			for j := range 4 { // 100 latencies in all: MinCountFor(0.99)
				out[i].Record(base + time.Duration(i*4+j)*time.Microsecond)
			}
		}
		return out
	}
	o := DefaultBootstrap()
	o.Resamples = 100
	c := CompareLatency(LatencySide{Intervals: side(10 * time.Millisecond)}, LatencySide{Intervals: side(20 * time.Millisecond)}, 0.99, o)
	r := c.Ratio
	if len(r.Warnings) != 0 || math.IsNaN(r.Low) || r.Significance != Significant || !strings.HasPrefix(r.Method, "bootstrap") {
		t.Errorf("at the edges: %v in [%v, %v] %v, warnings %q, method %q", r.Value, r.Low, r.High, r.Significance, r.Warnings, r.Method)
	}
}

// TestResampleReadsQuantilesAsTheSummary (issue 18): a bootstrap resample
// reads a quantile at the same rank as the summary's histogram does, so
// that an interval is about the figure printed beside it.
func TestResampleReadsQuantilesAsTheSummary(t *testing.T) {
	h := stats.NewHist()
	for v := 1; v <= 10; v++ {
		h.Record(time.Duration(v) * time.Millisecond)
	}
	values, hs, _ := sparse([]*stats.Hist{h}, nil)
	dense := make([]int64, len(values))
	rng := DefaultBootstrap().rand()
	for _, q := range []float64{0.1, 0.25, 0.5, 0.75, 0.99} {
		if got, want := resampleQuantile(hs, dense, values, q, rng), h.Quantile(q); got != want {
			t.Errorf("q %v: resample reads %v, the histogram %v", q, got, want)
		}
	}
}

// A paired resample, as the gateway overhead takes it, reads each of its
// quantiles at the same rank as the summary's histogram, too.
func TestPairedResampleReadsQuantilesAsTheSummary(t *testing.T) {
	h := stats.NewHist()
	for v := 1; v <= 10; v++ {
		h.Record(time.Duration(v) * time.Millisecond)
	}
	values, hs, _ := sparse([]*stats.Hist{h}, nil)
	qs := []float64{0.1, 0.25, 0.5, 0.75, 0.99}
	out := make([]time.Duration, len(qs))
	pickedQuantiles(hs, []int{0}, make([]int64, len(values)), values, qs, out)
	for i, q := range qs {
		if want := h.Quantile(q); out[i] != want {
			t.Errorf("q %v: the paired resample reads %v, the histogram %v", q, out[i], want)
		}
	}
}

// TestCompareSeriesAtItsEdges (issue 18): MinSeriesSamples samples on each
// side and 100 resamples give an interval; an interval that touches 1 is
// not significant.
func TestCompareSeriesAtItsEdges(t *testing.T) {
	a, b := make([]float64, MinSeriesSamples), make([]float64, MinSeriesSamples)
	for i := range a {
		a[i], b[i] = 1+0.01*float64(i%3), 2+0.01*float64(i%5)
	}
	o := DefaultBootstrap()
	o.Resamples = 100
	if r := CompareSeries(a, b, o); len(r.Warnings) != 0 || math.IsNaN(r.Low) || r.Significance != Significant {
		t.Errorf("at the edges: %v in [%v, %v] %v, warnings %q", r.Value, r.Low, r.High, r.Significance, r.Warnings)
	}
	for _, lh := range [][2]float64{{1, 2}, {0.5, 1}} {
		r := Ratio{Value: 1.2, Low: lh[0], High: lh[1]}
		if r.judge(); r.Significance != NotSignificant {
			t.Errorf("interval [%v, %v]: %v, want not significant", lh[0], lh[1], r.Significance)
		}
	}
}

// A B of 0 in every run (a component that used no CPU) is a ratio of 0,
// not one that cannot be taken.
func TestCompareRunsWithABOfZero(t *testing.T) {
	r := CompareRuns([]float64{1, 1.1, 0.9}, []float64{0, 0, 0})
	if r.Value != 0 || slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "a ratio needs") }) {
		t.Errorf("ratio %v, warnings %q; want 0", r.Value, r.Warnings)
	}
	if got := r.Phrase("CPU"); got != "x∞ less CPU" {
		t.Errorf("phrase %q", got)
	}
}

// With B at 0 in every run, A alone varies and the interval rests on A's
// degrees of freedom (n − 1): 1, 2 and 3 are not significantly above 0 at
// two degrees of freedom (t 4.30), so the ratio is "~", where four (t
// 2.78) would have found a difference.
func TestCompareRunsWithABOfZeroUsesAsDegreesOfFreedom(t *testing.T) {
	r := CompareRuns([]float64{1, 2, 3}, []float64{0, 0, 0})
	if got := r.Phrase("CPU"); got != "~" || !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "not significantly above 0") }) {
		t.Errorf("phrase %q, warnings %q; want ~, A not significantly above 0", got, r.Warnings)
	}
}
