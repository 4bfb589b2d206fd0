package analysis

import (
	"slices"
	"time"
)

// Point is one sampled value of a resource series.
type Point struct {
	T time.Time
	V float64
}

// MinSamplesP99 is the fewest samples a P99 is given for. Below it a Stat
// has Max and Avg but no P99.
const MinSamplesP99 = 10

// Stat is the P99, maximum and mean of a resource series over a window.
//
// P99 is the nearest-rank 99th percentile: the smallest sampled value that
// at least 99 % of the samples are less than or equal to, i.e. the value of
// rank ⌈0.99 × N⌉ in ascending order (1-based). It is always a value that
// was observed, never interpolated; with 100 samples or fewer it is the
// maximum. With fewer than MinSamplesP99 samples there is no P99.
type Stat struct {
	N   int     // samples
	P99 float64 // meaningful only when HasP99
	Max float64
	Avg float64
}

// HasP99 reports whether the sample supports a P99.
func (s Stat) HasP99() bool { return s.N >= MinSamplesP99 }

// StatOf computes the Stat of vs; vs is not modified.
func StatOf(vs []float64) Stat {
	s, _ := statSorted(vs)
	return s
}

// statSorted is StatOf, and vs sorted for callers that need more ranks.
func statSorted(vs []float64) (Stat, []float64) {
	s := Stat{N: len(vs)}
	if len(vs) == 0 {
		return s, nil
	}
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	var sum float64
	for _, v := range vs {
		sum += v
	}
	s.Avg = sum / float64(len(vs))
	s.Max = sorted[len(sorted)-1]
	if s.HasP99() {
		s.P99 = nearestRank(sorted, 99)
	}
	return s, sorted
}

// nearestRank is the value of rank ⌈pct/100 × N⌉ of sorted (N > 0),
// without floating point.
func nearestRank(sorted []float64, pct int) float64 {
	rank := max(1, (pct*len(sorted)+99)/100)
	return sorted[rank-1]
}

// pointsIn returns the points of ps, which are in time order, with
// w.Start < T ≤ w.End. The start is
// open because a rate sampled at T (CPU, GC per minute) covers the interval
// that ends at T: the sample at the window's start describes the second
// before it.
func pointsIn(ps []Point, w Window) []Point {
	after := func(p Point, t time.Time) int { // finds the first point after t
		if p.T.After(t) {
			return 1
		}
		return -1
	}
	lo, _ := slices.BinarySearchFunc(ps, w.Start, after)
	hi, _ := slices.BinarySearchFunc(ps, w.End, after)
	return ps[lo:hi]
}

func values(ps []Point) []float64 {
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = p.V
	}
	return vs
}

// sumStats is the "sum of the components" row: the sums of the components'
// P99, Max and Avg. Its N is the smallest N among them, so it has a P99 only
// when every component has one.
func sumStats(ss []Stat) Stat {
	if len(ss) == 0 {
		return Stat{}
	}
	out := Stat{N: ss[0].N}
	for _, s := range ss {
		out.N = min(out.N, s.N)
		out.P99 += s.P99
		out.Max += s.Max
		out.Avg += s.Avg
	}
	if !out.HasP99() {
		out.P99 = 0
	}
	return out
}

// summedSeries adds the series per sample time, in time order: at each
// time of the series with the fewest points (the coarsest), every series'
// value nearest to it within half that series' median spacing; a time at
// which some series has no value that near is left out. Series sampled on
// one clock (perflab's own ticks) match exactly, so a tick that any series
// missed is left out; series on another grid (a Prometheus source's steps
// beside local ticks) are matched to the nearest of their points.
func summedSeries(series [][]Point) []float64 {
	return sumSeries(series).values
}

// summed is a summed series: its values, and, when its series were not
// sampled at the same times, the points of the sparsest (0 when they were).
type summed struct {
	values []float64
	parts  [][]float64 // per value, each series' value that went into it
	grid   int
}

func sumSeries(series [][]Point) summed {
	if len(series) == 0 {
		return summed{}
	}
	ref := series[0]
	for _, ps := range series[1:] {
		if len(ps) < len(ref) {
			ref = ps
		}
	}
	tol := medianGap(ref) / 2
	next := make([]int, len(series)) // per series: the first point not before the last time matched
	out := summed{values: make([]float64, 0, len(ref))}
	exact := true
	for _, p := range ref {
		sum, all := 0.0, true
		parts := make([]float64, len(series))
		for j, ps := range series {
			v, at, ok := nearest(ps, p.T, tol, &next[j])
			sum += v
			parts[j] = v
			all = all && ok
			exact = exact && (!ok || at.Equal(p.T))
		}
		if all {
			out.values = append(out.values, sum)
			out.parts = append(out.parts, parts)
		}
	}
	if !exact {
		out.grid = len(ref)
	}
	return out
}

// nearest is the value and time of the point of ps nearest to t, if within
// tol; *from is where the search starts and moves on, as t only grows.
func nearest(ps []Point, t time.Time, tol time.Duration, from *int) (float64, time.Time, bool) {
	i := *from
	for i+1 < len(ps) && !ps[i+1].T.After(t) {
		i++
	}
	*from = i
	best, bestD := -1, time.Duration(0)
	for _, k := range []int{i, i + 1} {
		if k >= len(ps) {
			continue
		}
		d := ps[k].T.Sub(t).Abs()
		if best < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if best < 0 || bestD > tol {
		return 0, time.Time{}, false
	}
	return ps[best].V, ps[best].T, true
}

// medianGap is the median time between the points of ps; 0 with fewer
// than two.
func medianGap(ps []Point) time.Duration {
	if len(ps) < 2 {
		return 0
	}
	gaps := make([]time.Duration, len(ps)-1)
	for i := range gaps {
		gaps[i] = ps[i+1].T.Sub(ps[i].T)
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// RateOver is the mean of a series of rates (CPU cores, bytes per second)
// over w: each sample stands for the rate since the sample before it, and
// counts for the part of w that span covers. For a CPU series it is the CPU
// time the samples say was used in w over the seconds of w they cover. The
// mean of the values (Stat.Avg) is pulled away from that by samples the
// sampler took late, on a busy machine, and by the spans of the first and
// last that reach outside w; a rate set against what was done in w (CPU per
// request) needs this one. ok is false when no span meets w.
func RateOver(ps []Point, w Window) (rate float64, ok bool) {
	var sum, covered float64
	for i := 1; i < len(ps); i++ {
		from, to := ps[i-1].T, ps[i].T
		if from.Before(w.Start) {
			from = w.Start
		}
		if to.After(w.End) {
			to = w.End
		}
		if d := to.Sub(from).Seconds(); d > 0 {
			sum += ps[i].V * d
			covered += d
		}
	}
	if covered == 0 {
		return 0, false
	}
	return sum / covered, true
}
