// Package stats holds perflab's measurement types: HDR latency histograms that
// merge exactly, the closed sets of error classes and of the measures and
// counters drivers add (time to first token, inter-token latency, tokens),
// and the sharded recorder that turns completed operations into one-second
// intervals.
package stats

import (
	"errors"
	"fmt"
	"iter"
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
// Its counts are dense while values are recorded into it, packed (see
// packed.go) when it was read back from a store and nothing was recorded
// into it since, and absent while it is empty and was never written to.
type Hist struct {
	h *hdr.Histogram // dense counts; nil while packed or absent
	p *packed        // packed counts; nil while dense or absent
}

// NewHist returns an empty histogram with the first bucket's counts.
func NewHist() *Hist {
	return &Hist{h: newCounts(0)}
}

// EmptyHist returns an empty histogram that allocates counts only when a
// value is recorded or merged into it: for the empty histograms of a
// stored run, read back by the thousand.
func EmptyHist() *Hist { return &Hist{} }

// newCounts is an empty histogram whose range holds v and one bucket (a
// doubling) more, at least histFirst: latencies creeping up do not widen
// it value by value. Each bucket doubles the range for 8 KiB of counts.
func newCounts(v int64) *hdr.Histogram {
	return hdr.New(histLowest, min(max(2*v, histFirst), histHighest), histSigFigs)
}

// dense is x's dense counts, unpacked or allocated if need be.
func (x *Hist) dense() *hdr.Histogram {
	if x.h == nil {
		if x.p != nil {
			x.h = x.p.dense()
		} else {
			x.h = newCounts(0)
		}
		x.p = nil
	}
	return x.h
}

// Record adds one duration. Values outside the range are clamped to it, so
// a count is never lost; a stall longer than an hour is reported as an hour.
func (x *Hist) Record(d time.Duration) {
	v := min(max(int64(d/time.Microsecond), histLowest), histHighest)
	if v > x.dense().HighestTrackableValue() {
		x.grow(v)
	}
	_ = x.h.RecordValue(v) // cannot fail: v is inside the range
}

// Merge adds every count of o into x.
func (x *Hist) Merge(o *Hist) {
	if o == nil || o.Count() == 0 {
		return
	}
	if m := o.maxValue(); m > x.dense().HighestTrackableValue() {
		x.grow(m)
	}
	if o.h != nil {
		x.h.Merge(o.h)
		return
	}
	for i, n := range o.p.all() {
		lowest, _ := bucketAt(i)
		_ = x.h.RecordValues(lowest, n) // inside the range: grown to o's maximum
	}
}

// grow widens x's dense range to hold v (newCounts). Bucket boundaries
// depend only on the lowest value and the precision, so the counts carry
// over index for index and merges stay exact.
func (x *Hist) grow(v int64) {
	w := newCounts(v)
	w.Merge(x.h)
	x.h = w
}

// Reset empties x for reuse. A range more than four times wider than its
// values needed (grown in a stall that has passed) is given back, so that
// a recorder's histograms shrink again after a burst of slow operations.
func (x *Hist) Reset() {
	if x.h == nil {
		x.p = nil
		return
	}
	if m := x.h.Max(); x.h.HighestTrackableValue() > 4*max(m, histFirst) {
		x.h = newCounts(m)
		return
	}
	x.h.Reset()
}

// Count is the number of recorded values.
func (x *Hist) Count() int64 {
	if x.h == nil {
		return x.pk().total
	}
	return x.h.TotalCount()
}

// Quantile returns the value at quantile q in [0, 1]. For an empty histogram
// it returns 0.
func (x *Hist) Quantile(q float64) time.Duration {
	switch {
	case x.Count() == 0:
		return 0
	case x.h == nil:
		return time.Duration(x.p.quantile(q)) * time.Microsecond
	}
	return time.Duration(x.h.ValueAtQuantile(q*100)) * time.Microsecond
}

// maxValue is the library's Max: the top of the highest non-empty bucket.
func (x *Hist) maxValue() int64 {
	if x.h == nil {
		_, hi := x.pk().extremes()
		return hi
	}
	return x.h.Max()
}

// Max is the largest recorded value (to the histogram's precision).
func (x *Hist) Max() time.Duration {
	if x.Count() == 0 {
		return 0
	}
	return time.Duration(x.maxValue()) * time.Microsecond
}

// Min is the smallest recorded value (to the histogram's precision).
func (x *Hist) Min() time.Duration {
	switch {
	case x.Count() == 0:
		return 0
	case x.h == nil:
		lo, _ := x.p.extremes()
		return time.Duration(lo) * time.Microsecond
	}
	return time.Duration(x.h.Min()) * time.Microsecond
}

// Mean is the mean of the recorded values.
func (x *Hist) Mean() time.Duration {
	switch {
	case x.Count() == 0:
		return 0
	case x.h == nil:
		return time.Duration(math.Round(x.p.mean())) * time.Microsecond
	}
	return time.Duration(math.Round(x.h.Mean())) * time.Microsecond
}

// Equal reports whether x and o hold the same counts in the same buckets.
func (x *Hist) Equal(o *Hist) bool {
	if x.Count() != o.Count() {
		return false
	}
	next, stop := iter.Pull2(o.nonZero())
	defer stop()
	for i, n := range x.nonZero() {
		if j, m, ok := next(); !ok || i != j || n != m {
			return false
		}
	}
	_, _, more := next()
	return !more
}

// DecodeHist reads what Encode wrote, packed (see packed.go); a histogram
// of another layout than perflab's is read by the library, dense.
func DecodeHist(b []byte) (*Hist, error) {
	p, err := decodePacked(b)
	if err == nil {
		return &Hist{p: p}, nil
	}
	if !errors.Is(err, errNotPacked) {
		return nil, fmt.Errorf("cannot decode histogram: %w", err)
	}
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
	if x.h == nil {
		for i, n := range x.pk().all() {
			lowest, width := bucketAt(i)
			out = append(out, Bucket{Value: time.Duration(lowest+width-1) * time.Microsecond, Count: n})
		}
		return out
	}
	for _, b := range x.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bucket{Value: time.Duration(b.To) * time.Microsecond, Count: b.Count})
		}
	}
	return out
}
