// Package stats holds perflab's measurement types: HDR latency histograms that
// merge exactly, the closed sets of error classes and of the measures and
// counters drivers add (time to first token, inter-token latency, tokens),
// and the sharded recorder that turns completed operations into one-second
// intervals.
package stats

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision. Values are recorded in microseconds from
// 1 µs to one hour with three significant figures (0.1 % relative error), so
// every percentile perflab prints is within 0.1 % of the recorded value.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
)

// histFirst is the range a histogram starts with: the first bucket of
// 2048 single-microsecond steps, 16 KiB of counts. A histogram covers only
// the values it holds (see grow): a run whose slowest operation took 3 ms
// keeps 24 KiB per histogram, not the 184 KiB of the whole hour.
const histFirst = 2047

// Hist is a latency histogram in microseconds. Two Hists merge exactly: the
// bucket counts of a merge equal those of recording every value into one.
type Hist struct {
	h *hdr.Histogram
}

// NewHist returns an empty histogram.
func NewHist() *Hist {
	return &Hist{h: newCounts(0)}
}

// newCounts is an empty histogram whose range holds v and one bucket (a
// doubling) more, at least histFirst: latencies creeping up do not widen
// it value by value. Each bucket doubles the range for 8 KiB of counts.
func newCounts(v int64) *hdr.Histogram {
	return hdr.New(histLowest, min(max(2*v, histFirst), histHighest), histSigFigs)
}

// Record adds one duration. Values outside the range are clamped to it, so
// a count is never lost; a stall longer than an hour is reported as an hour.
func (x *Hist) Record(d time.Duration) {
	v := int64(d / time.Microsecond)
	if v < histLowest {
		v = histLowest
	}
	if v > histHighest {
		v = histHighest
	}
	if v > x.h.HighestTrackableValue() {
		x.grow(v)
	}
	_ = x.h.RecordValue(v) // cannot fail: v is inside the range
}

// Merge adds every count of o into x.
func (x *Hist) Merge(o *Hist) {
	if o == nil || o.h.TotalCount() == 0 {
		return
	}
	if m := o.h.Max(); m > x.h.HighestTrackableValue() {
		x.grow(m)
	}
	x.h.Merge(o.h)
}

// grow widens x's range to hold v (newCounts). Bucket boundaries depend
// only on the lowest value and the precision, so the counts carry over
// index for index and merges stay exact.
func (x *Hist) grow(v int64) {
	w := newCounts(v)
	w.Merge(x.h)
	x.h = w
}

// Reset empties x for reuse. A range more than four times wider than its
// values needed (grown in a stall that has passed) is given back, so that
// a recorder's histograms shrink again after a burst of slow operations.
func (x *Hist) Reset() {
	if m := x.h.Max(); x.h.HighestTrackableValue() > 4*max(m, histFirst) {
		x.h = newCounts(m)
		return
	}
	x.h.Reset()
}

// Count is the number of recorded values.
func (x *Hist) Count() int64 { return x.h.TotalCount() }

// Quantile returns the value at quantile q in [0, 1]. For an empty histogram
// it returns 0.
func (x *Hist) Quantile(q float64) time.Duration {
	if x.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(x.h.ValueAtQuantile(q*100)) * time.Microsecond
}

// Max is the largest recorded value (to the histogram's precision).
func (x *Hist) Max() time.Duration {
	if x.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(x.h.Max()) * time.Microsecond
}

// Min is the smallest recorded value (to the histogram's precision).
func (x *Hist) Min() time.Duration {
	if x.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(x.h.Min()) * time.Microsecond
}

// Mean is the mean of the recorded values.
func (x *Hist) Mean() time.Duration {
	if x.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(math.Round(x.h.Mean())) * time.Microsecond
}

// Equal reports whether x and o hold the same counts in the same buckets.
func (x *Hist) Equal(o *Hist) bool {
	a, b := x.h.Export().Counts, o.h.Export().Counts
	if len(a) < len(b) {
		a, b = b, a
	}
	for i, c := range a {
		if i < len(b) && c != b[i] || i >= len(b) && c != 0 {
			return false
		}
	}
	return x.h.TotalCount() == o.h.TotalCount()
}

// DecodeHist reads what Encode wrote.
func DecodeHist(b []byte) (*Hist, error) {
	h, err := hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("cannot decode histogram: %w", err)
	}
	return &Hist{h: h}, nil
}

// Bucket is one step of a histogram's distribution: Count values at or below
// Value that were not counted by an earlier bucket.
type Bucket struct {
	Value time.Duration
	Count int64
}

// Distribution lists the non-empty buckets in ascending order.
func (x *Hist) Distribution() []Bucket {
	var out []Bucket
	for _, b := range x.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bucket{Value: time.Duration(b.To) * time.Microsecond, Count: b.Count})
		}
	}
	return out
}
