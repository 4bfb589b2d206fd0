package analysis

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/units"
)

// Schedule is a workload's ramping schedule, as its plan's stages gave it:
// from Start, each stage moves the load linearly to its Target over its
// Duration; after the last stage there is no more load. The load is
// operations per second in the open model (byte rates already divided
// into operations) and VUs in the closed model.
type Schedule struct {
	Start  float64
	Stages []Stage
}

// Stage is one leg of a Schedule.
type Stage struct {
	Duration time.Duration `json:"duration"`
	Target   float64       `json:"target"`
}

// ParseSchedule reads a workload's stages as the results store holds them
// (docs/format/results.md): {"start": S, "stages": [{"duration": ns,
// "target": T}, …]}, or, as runs written before the start was kept, the
// array of stages alone, which started from 0 unless the plan said
// otherwise. Empty input is no schedule: nil.
func ParseSchedule(raw []byte) (*Schedule, error) {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return nil, nil
	}
	var s struct {
		Start  float64 `json:"start"`
		Stages []Stage `json:"stages"`
	}
	var err error
	if strings.HasPrefix(t, "[") {
		err = json.Unmarshal(raw, &s.Stages)
	} else {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read stages: %w", err)
	}
	if len(s.Stages) == 0 {
		return nil, nil
	}
	return &Schedule{Start: s.Start, Stages: s.Stages}, nil
}

// Due is the load the schedule asked for from its start to elapsed,
// integrated over time: for a rate, the arrivals due by then.
func (s *Schedule) Due(elapsed time.Duration) float64 {
	var due float64
	from := s.Start
	t := elapsed.Seconds()
	for _, st := range s.Stages {
		if t <= 0 { // equivalent mutant: t < 0; at 0 every stage left adds a part of 0
			break
		}
		d := st.Duration.Seconds()
		part := min(t, d)
		if d > 0 { // the load moves linearly from `from` to st.Target over d
			at := from + (st.Target-from)*part/d
			due += (from + at) / 2 * part
		}
		t -= part
		from = st.Target
	}
	return due
}

// Mean is the mean load the schedule asked for between from and to, both
// measured from its start; 0 for an empty span.
func (s *Schedule) Mean(from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	return (s.Due(to) - s.Due(from)) / (to - from).Seconds()
}

// Text describes the schedule in words: "ramp 10 → 200/s over 30 s,
// 200/s for 60 s" with unit "/s", "ramp 0 → 50 VUs over 10 s" with unit
// " VUs".
func (s *Schedule) Text(unit string) string {
	var parts []string
	from := s.Start
	for _, st := range s.Stages {
		secs := units.Sig3(st.Duration.Seconds()) + " s"
		if st.Target == from {
			parts = append(parts, fmt.Sprintf("%s%s for %s", units.Sig3(st.Target), unit, secs))
		} else {
			parts = append(parts, fmt.Sprintf("ramp %s → %s%s over %s", units.Sig3(from), units.Sig3(st.Target), unit, secs))
		}
		from = st.Target
	}
	return strings.Join(parts, ", ")
}
