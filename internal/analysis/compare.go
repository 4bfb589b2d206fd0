package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Significance says what a ratio's confidence interval supports.
type Significance uint8

const (
	// NotSignificant is printed "~": the 95 % interval includes 1, or
	// there were too few samples for one.
	NotSignificant Significance = iota
	// Significant: the 95 % interval excludes 1.
	Significant
	// NoInterval: only a point estimate was possible (e.g. only merged
	// histograms were given); reports mark it.
	NoInterval
)

func (s Significance) String() string {
	switch s {
	case Significant:
		return "significant"
	case NoInterval:
		return "no interval"
	}
	return "~"
}

// The rules comparisons follow.
const (
	// CompareConfidence is the level of every comparison's interval.
	CompareConfidence = 0.95
	// MinRuns is the fewest repeated runs per side CompareRuns gives an
	// interval for: one run has no run-to-run variation to measure.
	MinRuns = 2
	// MinSeriesSamples is the fewest per-interval samples per side
	// CompareSeries gives an interval for: with blocks of ⌈√n⌉ samples,
	// 30 samples make 5 blocks, the fewest a block bootstrap can mix.
	MinSeriesSamples = 30
)

// Ratio compares figure B with figure A as B / A, with a 95 % interval.
type Ratio struct {
	A, B         float64 // the figures compared: means, or quantiles
	NA, NB       int     // runs, samples or intervals on each side
	Value        float64 // B / A; NaN when A is not positive
	Low, High    float64 // the 95 % interval of B / A; NaN when there is none
	Significance Significance
	Method       string
	Warnings     []string
}

// Inverse is the same comparison as A / B.
func (r Ratio) Inverse() Ratio {
	inv := r
	inv.A, inv.B, inv.NA, inv.NB = r.B, r.A, r.NB, r.NA
	inv.Value, inv.Low, inv.High = 1/r.Value, 1/r.High, 1/r.Low
	return inv
}

// Phrase says how B compares with A in the seeds' words: "x1.7 less CPU",
// "x2.0 more memory", "x∞ less CPU" when B used none, or "~" when the
// data can't support a difference or the two are equal. A point estimate
// without an interval is marked "(no CI)".
func (r Ratio) Phrase(noun string) string { return r.PhraseWith("less", "more", noun) }

// PhraseWith is Phrase with other words, e.g. ("lower", "higher", "p99
// latency") → "x2.0 higher p99 latency".
func (r Ratio) PhraseWith(less, more, noun string) string {
	if r.Significance == NotSignificant || !(r.Value >= 0) || r.Value == 1 || math.IsInf(r.Value, 0) {
		return "~"
	}
	word, f := more, r.Value
	if f < 1 { // equivalent mutant: f <= 1; a ratio of 1 is "~" above
		word, f = less, 1/f
	}
	s := "x" + factor(f) + " " + word
	if noun != "" {
		s += " " + noun
	}
	if r.Significance == NoInterval {
		s += " (no CI)"
	}
	return s
}

// factor writes a ratio ≥ 1 with enough digits to be more than 1:
// "1.03", "1.7", "12".
func factor(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "∞"
	case f < 1.095:
		return fmt.Sprintf("%.2f", f)
	case f < 9.95:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

func newRatio(a, b float64, na, nb int, method string) Ratio {
	r := Ratio{A: a, B: b, NA: na, NB: nb, Value: math.NaN(), Low: math.NaN(), High: math.NaN(), Method: method}
	if a > 0 && b >= 0 {
		r.Value = b / a
	}
	return r
}

// judge sets the significance from the interval.
func (r *Ratio) judge() {
	r.Significance = NotSignificant
	if !math.IsNaN(r.Low) && !math.IsNaN(r.High) && (r.Low > 1 || r.High < 1) {
		r.Significance = Significant
	}
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// variance is the unbiased sample variance (n > 1).
func variance(vs []float64, m float64) float64 {
	var s float64
	for _, v := range vs {
		// equivalent mutants: either − made +; Σ(v+m)(v−m) = Σv² − n·m² = Σ(v−m)²
		s += (v - m) * (v - m)
	}
	return s / float64(len(vs)-1)
}

// CompareRuns compares the mean of B's repeated runs with the mean of A's
// (e.g. the CPU P99 of three runs each). The interval is Fieller's for the
// ratio of two independent means: the ratios ρ for which B̄ − ρ Ā is not
// significantly different from 0 in a t-test, with Welch–Satterthwaite
// degrees of freedom at ρ = B̄ / Ā. It is exact for normal run-to-run
// variation and, unlike a bootstrap, honest with two or three runs. When
// Ā itself is not significantly above 0 the interval is unbounded and the
// verdict "~".
func CompareRuns(a, b []float64) Ratio {
	const method = "Fieller's 95 % interval for the ratio of two independent means (Welch–Satterthwaite degrees of freedom)"
	if len(a) < MinRuns || len(b) < MinRuns {
		r := newRatio(meanOr0(a), meanOr0(b), len(a), len(b), method)
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d and %d runs: an interval needs at least %d runs on each side", len(a), len(b), MinRuns))
		return r
	}
	ma, mb := mean(a), mean(b)
	r := newRatio(ma, mb, len(a), len(b), method)
	if math.IsNaN(r.Value) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("means %.4g and %.4g: a ratio needs a positive A and a B of 0 or more", ma, mb))
		return r
	}
	va, vb := variance(a, ma)/float64(len(a)), variance(b, mb)/float64(len(b))
	if va == 0 && vb == 0 {
		r.Low, r.High = r.Value, r.Value
		r.Warnings = append(r.Warnings, "every run on each side gave the same figure: the interval is a point")
		r.judge()
		return r
	}
	rho := r.Value
	den := vb*vb/float64(len(b)-1) + math.Pow(rho*rho*va, 2)/float64(len(a)-1)
	dof := math.Pow(vb+rho*rho*va, 2) / den
	if den == 0 { // B is 0 in every run: only A varies, and the degrees of freedom are its own
		dof = float64(len(a) - 1)
	}
	t := tQuantile(1-(1-CompareConfidence)/2, dof)
	q := ma*ma - t*t*va // the quadratic's leading coefficient
	// equivalent mutant: q < 0; q is exactly 0 only for a contrived A (ma² = t²·va to the last bit)
	if q <= 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("A's mean %.4g is not significantly above 0: the interval is unbounded", ma))
		return r
	}
	disc := math.Sqrt(ma*ma*mb*mb - q*(mb*mb-t*t*vb))
	r.Low, r.High = (ma*mb-disc)/q, (ma*mb+disc)/q
	r.judge()
	return r
}

func meanOr0(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return mean(vs)
}

// BootstrapOptions make a bootstrap deterministic: the same samples, options
// and seed give the same interval, bit for bit.
type BootstrapOptions struct {
	Resamples int
	Seed      uint64
}

// DefaultBootstrap is 2000 resamples from seed 1.
func DefaultBootstrap() BootstrapOptions { return BootstrapOptions{Resamples: 2000, Seed: 1} }

func (o BootstrapOptions) rand() *rand.Rand {
	return rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
}

// blockLen is the bootstrap block length for n samples: ⌈√n⌉.
func blockLen(n int) int { return int(math.Ceil(math.Sqrt(float64(n)))) }

// CompareSeries compares the mean of B's per-interval samples with A's
// (e.g. CPU cores sampled every second over each window). Successive
// samples are correlated, so the interval is a circular block bootstrap:
// each resample strings together blocks of ⌈√n⌉ consecutive samples (wrapping
// at the end) from random starts, the two sides independently; the
// interval is the 2.5th and 97.5th percentiles of the resampled ratios of
// means. It needs MinSeriesSamples samples on each side.
func CompareSeries(a, b []float64, o BootstrapOptions) Ratio {
	method := fmt.Sprintf("circular block bootstrap of the ratio of means: blocks of ⌈√n⌉ samples (%d and %d), %d resamples, seed %d, 95 %% percentile interval",
		blockLen(len(a)), blockLen(len(b)), o.Resamples, o.Seed)
	r := newRatio(meanOr0(a), meanOr0(b), len(a), len(b), method)
	if len(a) < MinSeriesSamples || len(b) < MinSeriesSamples {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d and %d samples: an interval needs at least %d on each side", len(a), len(b), MinSeriesSamples))
		return r
	}
	if math.IsNaN(r.Value) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("means %.4g and %.4g: a ratio needs a positive A and a B of 0 or more", r.A, r.B))
		return r
	}
	if o.Resamples < 100 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d resamples: an interval needs at least 100", o.Resamples))
		return r
	}
	rng := o.rand()
	ratios := make([]float64, o.Resamples)
	for i := range ratios {
		ratios[i] = blockMean(b, rng) / blockMean(a, rng)
	}
	r.Low, r.High = percentileInterval(ratios)
	r.judge()
	return r
}

// blockMean is the mean of one circular block resample of vs.
func blockMean(vs []float64, rng *rand.Rand) float64 {
	n, l := len(vs), blockLen(len(vs))
	var sum float64
	for taken := 0; taken < n; {
		start := rng.IntN(n)
		for j := 0; j < l && taken < n; j++ {
			sum += vs[(start+j)%n]
			taken++
		}
	}
	return sum / float64(n)
}

// percentileInterval sorts rs and returns its 2.5th and 97.5th
// percentiles: the order statistics ⌊0.025 R⌋ and ⌈0.975 R⌉ − 1
// (0-based), e.g. 50 and 1949 of 2000.
func percentileInterval(rs []float64) (float64, float64) {
	slices.Sort(rs)
	tail := (1 - CompareConfidence) / 2
	lo := int(math.Floor(tail * float64(len(rs))))
	hi := int(math.Ceil((1-tail)*float64(len(rs)))) - 1
	return rs[lo], rs[hi]
}
