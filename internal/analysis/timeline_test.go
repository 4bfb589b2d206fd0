package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	iv := &stats.Interval{Start: t0, End: t0.Add(2 * time.Second), Dropped: 3, Ops: map[string]*stats.OpStats{}}
	for i, name := range []string{"GET", "PUT"} {
		st := stats.NewOpStats()
		for j := 1; j <= 100; j++ {
			st.Latency.Record(time.Duration(j+100*i) * time.Millisecond)
		}
		st.Classes[stats.OK], st.Classes[stats.Timeout] = 90, 10
		iv.Ops[name] = st
	}
	got := Timeline([]*stats.Interval{iv, {Start: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second), Ops: map[string]*stats.OpStats{}}})
	f := got[0]
	if f.Requests != 200 || f.Errors != 20 || f.Dropped != 3 || f.Rate != 100 || f.Latencies != 200 {
		t.Errorf("counts %+v", f)
	}
	// 200 latencies of 1…200 ms: p50 100 ms, p99 198 ms (within the histogram's precision).
	if d := f.P50 - 100*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("p50 %v", f.P50)
	}
	if d := f.P99 - 198*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("p99 %v", f.P99)
	}
	if got[1].Latencies != 0 || got[1].P99 != 0 {
		t.Errorf("empty interval %+v", got[1])
	}
}

func TestSpectrum(t *testing.T) {
	h := stats.NewHist()
	for j := 1; j <= 1000; j++ {
		h.Record(time.Duration(j) * time.Millisecond)
	}
	s := Spectrum(h)
	// 1/(1−q) from 10^0.3 to 10^3 by tenths of a decade: 28 points.
	if len(s) != 28 || math.Abs(s[0].Q-0.4988) > 1e-3 || math.Abs(s[len(s)-1].Q-0.999) > 1e-9 {
		t.Fatalf("%d points, first q %v, last q %v", len(s), s[0].Q, s[len(s)-1].Q)
	}
	for i := 1; i < len(s); i++ {
		if s[i].Value < s[i-1].Value {
			t.Errorf("not monotonic at %d", i)
		}
	}
	if Spectrum(stats.NewHist()) != nil {
		t.Error("spectrum of nothing")
	}
}

// An interval of no duration has no rate: 0, not +Inf.
func TestTimelineOfNoDuration(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := stats.NewOpStats()
	st.Latency.Record(time.Millisecond)
	st.Classes[stats.OK] = 1
	f := Timeline([]*stats.Interval{{Start: t0, End: t0, Ops: map[string]*stats.OpStats{"GET": st}}})[0]
	if f.Requests != 1 || f.Rate != 0 {
		t.Errorf("%d requests at %v/s in no time", f.Requests, f.Rate)
	}
}

// Two latencies support the median alone: a spectrum of one point.
func TestSpectrumOfTwo(t *testing.T) {
	h := stats.NewHist()
	h.Record(time.Millisecond)
	h.Record(3 * time.Millisecond)
	s := Spectrum(h)
	if len(s) != 1 || math.Abs(s[0].Q-0.4988) > 1e-3 {
		t.Fatalf("spectrum of two: %+v", s)
	}
	one := stats.NewHist()
	one.Record(time.Millisecond)
	if Spectrum(one) != nil {
		t.Error("spectrum of one")
	}
}
