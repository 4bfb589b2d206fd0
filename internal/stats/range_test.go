package stats

import (
	"testing"
	"time"
)

// counts is what x's counts cost in memory, in 8-byte counts: the length
// of its dense counts, or of its packed ones over 8.
func counts(x *Hist) int {
	if x.h == nil {
		return (len(x.pk().counts) + 7) / 8
	}
	return len(x.h.Export().Counts)
}

func TestHistogramRangeFollowsItsValues(t *testing.T) {
	h := NewHist()
	h.Record(500 * time.Microsecond)
	if n := counts(h); n != 2048 {
		t.Errorf("a histogram of sub-millisecond values has %d counts, want the first bucket's 2048", n)
	}
	h.Record(time.Second)
	grown := counts(h)
	if full := counts(&Hist{h: newCounts(histHighest)}); grown >= full {
		t.Errorf("a histogram up to 1 s has %d counts, the full hour %d: want fewer", grown, full)
	}
	// Emptied, it keeps the range the values it held used...
	h.Reset()
	if n := counts(h); n != grown {
		t.Errorf("reset after values up to 1 s: %d counts, want %d kept", n, grown)
	}
	// ...and gives it back once an interval no longer needs it.
	h.Record(500 * time.Microsecond)
	h.Reset()
	if n := counts(h); n != 2048 {
		t.Errorf("reset after sub-millisecond values only: %d counts, want 2048 again", n)
	}
}

func TestHistogramsOfDifferentRangesMergeExactly(t *testing.T) {
	small, wide, want := NewHist(), NewHist(), NewHist()
	for i := 1; i <= 3000; i++ {
		d := time.Duration(i) * 997 * time.Nanosecond
		small.Record(d)
		want.Record(d)
	}
	for _, d := range []time.Duration{3 * time.Millisecond, 70 * time.Millisecond, 2 * time.Second, 40 * time.Minute} {
		wide.Record(d)
		want.Record(d)
	}
	a := NewHist()
	a.Merge(small)
	a.Merge(wide)
	b := NewHist()
	b.Merge(wide)
	b.Merge(small)
	for name, got := range map[string]*Hist{"small then wide": a, "wide then small": b} {
		if !got.Equal(want) || !want.Equal(got) {
			t.Errorf("%s: the merge differs from recording every value into one histogram", name)
		}
		if got.Quantile(0.5) != want.Quantile(0.5) || got.Max() != want.Max() {
			t.Errorf("%s: p50 %v max %v, want %v and %v", name, got.Quantile(0.5), got.Max(), want.Quantile(0.5), want.Max())
		}
	}
}

// TestHistogramRangeAtItsEdges: a value at the top of the first bucket
// (2047 µs), recorded or merged, needs no wider range; a range exactly
// four times what the values need is kept by Reset, only a wider one is
// given back.
func TestHistogramRangeAtItsEdges(t *testing.T) {
	top := histFirst * time.Microsecond
	h := NewHist()
	h.Record(top)
	if n := counts(h); n != 2048 {
		t.Errorf("a histogram of values up to %v has %d counts, want the first bucket's 2048", top, n)
	}
	merged := NewHist()
	merged.Merge(h)
	if n := counts(merged); n != 2048 || merged.Max() != top {
		t.Errorf("merged values up to %v: %d counts, max %v; want 2048 and %v", top, n, merged.Max(), top)
	}
	h.Record(2 * top) // widens the range to four times the first bucket
	wide := counts(h)
	h.Reset()
	h.Record(500 * time.Microsecond)
	h.Reset()
	if n := counts(h); n != wide {
		t.Errorf("reset of a range four times the first bucket's: %d counts, want its %d kept", n, wide)
	}
	h.Record(5 * top) // widens it to ten times
	h.Reset()
	h.Record(500 * time.Microsecond)
	h.Reset()
	if n := counts(h); n != 2048 {
		t.Errorf("reset of a range ten times the first bucket's: %d counts, want 2048 again", n)
	}
}
