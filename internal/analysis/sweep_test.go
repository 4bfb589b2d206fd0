package analysis

import (
	"fmt"
	"slices"
	"testing"
)

// sweepSteps runs a sweep whose steps achieve what achieve says of each
// (kind, rate), and returns the steps it ran.
func sweepSteps(s *Sweep, achieve func(kind string, rate float64) (float64, bool)) []string {
	var ran []string
	for range 100 {
		kind, rate, done := s.Next()
		if done {
			return ran
		}
		a, client := achieve(kind, rate)
		s.Record(a, client)
		ran = append(ran, fmt.Sprintf("%s %g", kind, rate))
	}
	panic("the sweep does not end")
}

// A target that serves 10/s one at a time and 100/s at most: the sweep
// runs synchronous, throughput, then 32.5, 55, 77.5 and 100/s, and stops
// at the first rate it cannot keep up with.
func TestSweepStopsAtOverSaturation(t *testing.T) {
	target := func(capacity float64) func(string, float64) (float64, bool) {
		return func(kind string, rate float64) (float64, bool) {
			switch kind {
			case SweepSynchronous:
				return 10, false
			case SweepThroughput:
				return 100, false
			}
			return min(rate, capacity), false
		}
	}
	s := &Sweep{Size: 6}
	ran := sweepSteps(s, target(100))
	if want := []string{"synchronous 0", "throughput 0", "constant 32.5", "constant 55", "constant 77.5", "constant 100"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
	if !slices.Equal(s.Rates, []float64{32.5, 55, 77.5, 100}) || s.Limit() != "size" || s.Saturated != 0 {
		t.Errorf("rates %v, limit %s, saturated %v", s.Rates, s.Limit(), s.Saturated)
	}
	// capacity 60/s: 55 achieves it all, 77.5 only 60 (77 %): over-saturated
	s = &Sweep{Size: 6}
	ran = sweepSteps(s, target(60))
	if len(ran) != 5 || s.Saturated != 77.5 || s.Limit() != "saturated" {
		t.Errorf("ran %q, saturated at %v, limit %s; want the sweep to stop after 77.5/s", ran, s.Saturated, s.Limit())
	}
	// 95 % of the rate is enough: 52.3 of 55 is not over-saturated
	s = &Sweep{Size: 6}
	sweepSteps(s, func(kind string, rate float64) (float64, bool) {
		if kind == SweepConstant && rate == 55 {
			return 52.3, false
		}
		return target(100)(kind, rate)
	})
	if s.Saturated != 0 {
		t.Errorf("52.3/s of 55/s (95.1 %%) taken for over-saturation")
	}
}

// The sweep ends early when one request at a time completes nothing, when
// many at once go no faster, and when the generator is the limit; a sweep
// of 2 is the synchronous and throughput steps alone.
func TestSweepEndsEarly(t *testing.T) {
	for _, tc := range []struct {
		size    int
		sync    float64
		thr     float64
		client  bool
		steps   int
		limit   string
		clients float64
	}{
		{5, 0, 100, false, 1, "nothing", 0},
		{5, 10, 9, false, 2, "flat", 0},
		{5, 10, 10, false, 2, "flat", 0}, // many at once exactly as fast: still nothing between
		{5, 10, 100, true, 3, "generator", 40},
		{2, 10, 100, false, 2, "size", 0},
	} {
		s := &Sweep{Size: tc.size}
		ran := sweepSteps(s, func(kind string, rate float64) (float64, bool) {
			switch kind {
			case SweepSynchronous:
				return tc.sync, false
			case SweepThroughput:
				return tc.thr, false
			}
			return rate / 2, tc.client
		})
		if len(ran) != tc.steps || s.Limit() != tc.limit || s.Client != tc.clients || s.Saturated != 0 {
			t.Errorf("%+v: ran %q, limit %s, client %v, saturated %v", tc, ran, s.Limit(), s.Client, s.Saturated)
		}
	}
	if r := SweepRates(12.34, 98.7, 5); !slices.Equal(r, []float64{41.1, 69.9, 98.7}) {
		t.Errorf("rates %v", r)
	}
}
