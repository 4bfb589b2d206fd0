package export

import (
	"math"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/histogram"

	"github.com/perflab/perflab/internal/stats"
)

// NativeSchema is the resolution of the native histograms: schema 5,
// buckets 2^(1/32) wide, so that a quantile read from one is within about
// 2.2 % of the recorded value.
const NativeSchema = 5

// nativeName is the series of the latency as a native histogram; it is
// not perflab_latency_seconds, the summary, whose type it would clash
// with.
const nativeName = "perflab_latency_histogram_seconds"

// native is the running state of a native histogram series.
type native struct {
	start   time.Time
	buckets map[int32]uint64
	count   uint64
	sum     float64
}

// natives keeps the native histograms' running state by series.
type natives map[string]*native

// add adds the values of h to the series of s and returns what to send:
// s with the cumulative histogram, preceded, for a series seen for the
// first time, by an empty one at start.
func (nn natives) add(out []Series, s Series, start time.Time, h *stats.Hist) []Series {
	k := s.key()
	n := nn[k]
	if n == nil {
		n = &native{start: start, buckets: map[int32]uint64{}}
		nn[k] = n
		if start.Before(s.Time) {
			zero := s
			zero.Time, zero.Start, zero.Native = start, start, &histogram.Histogram{Schema: NativeSchema}
			out = append(out, zero)
		}
	}
	for _, b := range h.Distribution() {
		n.buckets[nativeIndex(b.Value.Seconds())] += uint64(b.Count)
	}
	n.count += uint64(h.Count())
	n.sum += h.Mean().Seconds() * float64(h.Count())
	s.Start, s.Native = n.start, n.histogram()
	return append(out, s)
}

// nativeIndex is the bucket of v at NativeSchema: bucket i holds the
// values in (2^((i-1)/32), 2^(i/32)].
func nativeIndex(v float64) int32 {
	return int32(math.Ceil(math.Log2(v) * (1 << NativeSchema)))
}

// histogram is n as Prometheus has it: spans of consecutive buckets, each
// count as the difference to the one before.
func (n *native) histogram() *histogram.Histogram {
	h := &histogram.Histogram{Schema: NativeSchema, Count: n.count, Sum: n.sum}
	idx := make([]int32, 0, len(n.buckets))
	for i := range n.buckets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var prev int32
	var last int64
	for j, i := range idx {
		if j == 0 || i != prev+1 {
			off := i
			if j > 0 {
				off = i - prev - 1
			}
			h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: off})
		}
		h.PositiveSpans[len(h.PositiveSpans)-1].Length++
		c := int64(n.buckets[i])
		h.PositiveBuckets = append(h.PositiveBuckets, c-last)
		prev, last = i, c
	}
	return h
}
