package analysis

import (
	"math"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	for _, tt := range []struct {
		raw   string
		start float64
		n     int
	}{
		{`{"start":10,"stages":[{"duration":30000000000,"target":200},{"duration":60000000000,"target":200}]}`, 10, 2},
		{`[{"duration":30000000000,"target":200}]`, 0, 1}, // a run written before the start was kept
		{``, 0, 0}, {`null`, 0, 0}, {`{"start":5,"stages":[]}`, 0, 0},
	} {
		s, err := ParseSchedule([]byte(tt.raw))
		switch {
		case err != nil:
			t.Errorf("%s: %v", tt.raw, err)
		case tt.n == 0 && s != nil:
			t.Errorf("%s: schedule %+v, want none", tt.raw, s)
		case tt.n > 0 && (s == nil || s.Start != tt.start || len(s.Stages) != tt.n || s.Stages[0].Duration != 30*time.Second || s.Stages[0].Target != 200):
			t.Errorf("%s: %+v", tt.raw, s)
		}
	}
	if _, err := ParseSchedule([]byte(`{"start":`)); err == nil {
		t.Error("a broken schedule is read without an error")
	}
}

// The arrivals due and the mean rate of 10 → 200/s over 30 s, then 200/s
// for 60 s, then nothing: integrals of the piecewise-linear rate.
func TestScheduleDueAndMean(t *testing.T) {
	s := &Schedule{Start: 10, Stages: []Stage{{30 * time.Second, 200}, {60 * time.Second, 200}}}
	for _, tt := range []struct {
		at   time.Duration
		want float64
	}{
		{0, 0}, {-time.Second, 0},
		{time.Second, (10 + 10 + 190.0/30) / 2}, // the rate at 1 s is 10 + 190/30
		{15 * time.Second, (10.0 + 105) / 2 * 15},
		{30 * time.Second, 3150}, {90 * time.Second, 3150 + 12000}, {2 * time.Minute, 15150},
	} {
		if got := s.Due(tt.at); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Due(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
	if got := s.Mean(30*time.Second, 90*time.Second); math.Abs(got-200) > 1e-9 {
		t.Errorf("mean over the flat stage %v", got)
	}
	if got := s.Mean(0, 30*time.Second); math.Abs(got-105) > 1e-9 {
		t.Errorf("mean over the ramp %v", got)
	}
	if got := s.Mean(5*time.Second, 5*time.Second); got != 0 {
		t.Errorf("mean over nothing %v", got)
	}
	if got, want := s.Text("/s"), "ramp 10 → 200/s over 30 s, 200/s for 60 s"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	c := &Schedule{Stages: []Stage{{10 * time.Second, 50}, {1500 * time.Millisecond, 0}}}
	if got, want := c.Text(" VUs"), "ramp 0 → 50 VUs over 10 s, ramp 50 → 0 VUs over 1.5 s"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// A stage of no duration is a jump: the load is its target from then on,
// and the arrivals due are counted, not NaN.
func TestScheduleJump(t *testing.T) {
	s := Schedule{Start: 10, Stages: []Stage{{Duration: 0, Target: 100}, {Duration: 10 * time.Second, Target: 100}}}
	if got := s.Due(5 * time.Second); got != 500 {
		t.Errorf("due after 5 s of a jump to 100/s: %v, want 500", got)
	}
}
