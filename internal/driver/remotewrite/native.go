package remotewrite

import (
	"fmt"
	"math"
	"slices"

	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// NativeHistograms adds a native histogram beside each classic one of a
// target (the latency histograms, per disk and operation, and the
// exporter's scrape duration): the same family name, exponential buckets
// of Schema (bucket boundaries 2^(k/2^schema)), Buckets populated
// buckets around the family's median, Observations more observations per
// series every scrape interval on average. Both remote write versions
// carry them; the read-back checks them with histogram_count and
// histogram_sum.
type NativeHistograms struct {
	Schema       *int    `yaml:"schema"`       // -4 to 8; default 3 (boundaries 2^(1/8) ≈ 9 % apart)
	Buckets      int     `yaml:"buckets"`      // populated buckets per histogram, 1 to 160; default 20
	Observations float64 `yaml:"observations"` // per series per scrape interval, on average; default 300
}

// Defaults and limits of NativeHistograms.
const (
	DefaultNativeSchema       = 3
	DefaultNativeBuckets      = 20
	DefaultNativeObservations = 300
	maxNativeBuckets          = 160 // Prometheus' native_histogram_bucket_limit is often set about there
	maxObservations           = 1e9
)

// nativeShape is NativeHistograms with its defaults.
type nativeShape struct {
	schema  int32
	buckets int
	obs     float64
}

func (n *NativeHistograms) shape() nativeShape {
	s := nativeShape{schema: DefaultNativeSchema, buckets: n.Buckets, obs: n.Observations}
	if n.Schema != nil {
		s.schema = int32(*n.Schema)
	}
	setDefault(&s.buckets, DefaultNativeBuckets)
	setDefault(&s.obs, DefaultNativeObservations)
	return s
}

// check reports the problems of n.
func (n *NativeHistograms) check() []string {
	var errs []string
	if n.Schema != nil && (*n.Schema < -4 || *n.Schema > 8) {
		errs = append(errs, fmt.Sprintf("native_histograms.schema %d is out of range (-4 to 8)", *n.Schema))
	}
	if n.Buckets < 0 || n.Buckets > maxNativeBuckets {
		errs = append(errs, fmt.Sprintf("native_histograms.buckets %d is out of range (1 to %d)", n.Buckets, maxNativeBuckets))
	}
	if n.Observations < 0 || n.Observations > maxObservations || math.IsNaN(n.Observations) {
		errs = append(errs, fmt.Sprintf("native_histograms.observations %v is out of range (above 0, at most %g)", n.Observations, float64(maxObservations)))
	}
	return errs
}

// nativeBuckets is where a native histogram's observations fall: its
// first bucket's index and each bucket's share of the observations. The
// buckets are centred on the median; the first takes all below it, the
// last all above, so the shares add up to 1.
type nativeBuckets struct {
	offset  int32
	shares  []float64
	spans1  []prompb.BucketSpan // one span of every bucket, shared by all requests
	spans2  []writev2.BucketSpan
	schema  int32
	zeroThr float64
}

func newNativeBuckets(s nativeShape, median float64) *nativeBuckets {
	scale := math.Exp2(float64(s.schema))
	mid := int32(math.Ceil(math.Log2(median) * scale))
	nb := &nativeBuckets{offset: mid - int32(s.buckets/2), schema: s.schema, zeroThr: math.Ldexp(1, -128)} // Prometheus' default zero threshold
	upper := func(k int32) float64 { return math.Exp2(float64(k) / scale) }
	for i := range s.buckets {
		k := nb.offset + int32(i)
		lo, hi := logLogistic(upper(k-1), median), logLogistic(upper(k), median)
		switch {
		case s.buckets == 1:
			lo, hi = 0, 1
		case i == 0:
			lo = 0
		case i == s.buckets-1:
			hi = 1
		}
		nb.shares = append(nb.shares, hi-lo)
	}
	nb.spans1 = []prompb.BucketSpan{{Offset: nb.offset, Length: uint32(s.buckets)}}
	nb.spans2 = []writev2.BucketSpan{{Offset: nb.offset, Length: uint32(s.buckets)}}
	return nb
}

// nativeSeries are the native histograms of fams' classic histograms, for
// a target: one per label set, named as the family.
func nativeSeries(fams []family, s nativeShape, first int) []tseries {
	var out []tseries
	for _, f := range fams {
		if f.kind != histogram {
			continue
		}
		nb := newNativeBuckets(s, f.median)
		for _, set := range product(f.dims) {
			t := newSeries(f.name, slices.Clone(set), nhist, s.obs, true, f.median*math.Pi/2, uint64(first+len(out)))
			t.native = nb
			out = append(out, t)
		}
	}
	return out
}

// histValue is a native histogram's state at round for the target whose
// instance has id: its bucket counts as deltas (appended to deltas), the
// count and sum. Each bucket grows by about its share of mag
// observations a round, so every bucket is a counter on its own and
// the histogram never looks reset; the sum is the count times the mean.
func (t *tseries) histValue(id, round uint64, deltas []int64) (count uint64, sum float64, out []int64) {
	h := mix(id*0x9e3779b97f4a7c15 + t.group)
	u1, u2 := unit(h), unit(mix(h))
	r := float64(round)
	prev := int64(0)
	for _, sh := range t.native.shares {
		c := int64(math.Floor(sh*t.mag*1000*u1 + r*sh*t.mag*(0.5+u2)))
		deltas = append(deltas, c-prev)
		prev = c
		count += uint64(c)
	}
	return count, float64(count) * t.frac, deltas
}

// histState is what a VU reuses for the native histograms of a request.
type histState struct {
	deltas []int64
	h1     []prompb.Histogram
	count1 []prompb.Histogram_CountInt
	zero1  []prompb.Histogram_ZeroCountInt
	h2     []writev2.Histogram
	count2 []writev2.Histogram_CountInt
	zero2  []writev2.Histogram_ZeroCountInt
}

func (hs *histState) reset() {
	hs.deltas, hs.h1, hs.count1, hs.zero1 = hs.deltas[:0], hs.h1[:0], hs.count1[:0], hs.zero1[:0]
	hs.h2, hs.count2, hs.zero2 = hs.h2[:0], hs.count2[:0], hs.zero2[:0]
}

// add1 appends t's histogram at round, stamped ms, as remote write 1.0
// carries it, and returns it as a one-element slice. Slices taken before
// an append that grows an array still point into the old one, whose
// contents stay valid.
func (hs *histState) add1(t *tseries, id, round uint64, ms int64) []prompb.Histogram {
	start := len(hs.deltas)
	count, sum, deltas := t.histValue(id, round, hs.deltas)
	hs.deltas = deltas
	hs.count1 = append(hs.count1, prompb.Histogram_CountInt{CountInt: count})
	hs.zero1 = append(hs.zero1, prompb.Histogram_ZeroCountInt{})
	nb := t.native
	hs.h1 = append(hs.h1, prompb.Histogram{Count: &hs.count1[len(hs.count1)-1], Sum: sum, Schema: nb.schema,
		ZeroThreshold: nb.zeroThr, ZeroCount: &hs.zero1[len(hs.zero1)-1], PositiveSpans: nb.spans1,
		PositiveDeltas: deltas[start:len(deltas):len(deltas)], Timestamp: ms})
	k := len(hs.h1)
	return hs.h1[k-1 : k : k]
}

// add2 is add1 for remote write 2.0.
func (hs *histState) add2(t *tseries, id, round uint64, ms int64) []writev2.Histogram {
	start := len(hs.deltas)
	count, sum, deltas := t.histValue(id, round, hs.deltas)
	hs.deltas = deltas
	hs.count2 = append(hs.count2, writev2.Histogram_CountInt{CountInt: count})
	hs.zero2 = append(hs.zero2, writev2.Histogram_ZeroCountInt{})
	nb := t.native
	hs.h2 = append(hs.h2, writev2.Histogram{Count: &hs.count2[len(hs.count2)-1], Sum: sum, Schema: nb.schema,
		ZeroThreshold: nb.zeroThr, ZeroCount: &hs.zero2[len(hs.zero2)-1], PositiveSpans: nb.spans2,
		PositiveDeltas: deltas[start:len(deltas):len(deltas)], Timestamp: ms})
	k := len(hs.h2)
	return hs.h2[k-1 : k : k]
}

// natives is the number of native histograms of a target.
func (g *generator) natives() int {
	n := 0
	for _, t := range g.tmpl {
		if t.kind == nhist {
			n++
		}
	}
	return n
}
