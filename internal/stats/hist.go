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

// Hist is a latency histogram in microseconds. Two Hists merge exactly: the
// bucket counts of a merge equal those of recording every value into one.
type Hist struct {
	h *hdr.Histogram
}

// NewHist returns an empty histogram.
func NewHist() *Hist {
	return &Hist{h: hdr.New(histLowest, histHighest, histSigFigs)}
}

// Record adds one duration. Values outside the range are clamped to it, so
// a count is never lost; a stall longer than an hour is reported as an hour.
func (x *Hist) Record(d time.Duration) {
	v := int64(d / time.Microsecond)
	if v < histLowest { // equivalent mutant: <= sets histLowest to itself
		v = histLowest
	}
	if v > histHighest { // equivalent mutant: >= sets histHighest to itself
		v = histHighest
	}
	if v > x.h.HighestTrackableValue() { // equivalent mutant: >= widens a histogram that holds v already, same counts
		x.widen()
	}
	_ = x.h.RecordValue(v) // cannot fail: v is inside the range
}

// Merge adds every count of o into x.
func (x *Hist) Merge(o *Hist) {
	if o == nil || o.h.TotalCount() == 0 {
		return
	}
	if o.h.Max() > x.h.HighestTrackableValue() { // equivalent mutant: >= widens when not needed, same counts
		x.widen()
	}
	x.h.Merge(o.h)
}

// widen gives x the full range. A decoded histogram covers only up to its
// maximum (see Encode): that keeps a run's intervals small in memory when a
// report reads them all, and it grows here before it takes a larger value.
// Bucket boundaries depend only on the lowest value and the precision, so
// the counts carry over index for index.
func (x *Hist) widen() {
	w := hdr.New(histLowest, histHighest, histSigFigs)
	w.Merge(x.h)
	x.h = w
}

// Reset empties x for reuse.
func (x *Hist) Reset() { x.h.Reset() }

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
	// equivalent mutants (the swap's < made <= or >=, i >= len(b) made >):
	// counts are never negative, so once the common prefix is equal the
	// totals compared below differ exactly when the longer's tail is not 0.
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
