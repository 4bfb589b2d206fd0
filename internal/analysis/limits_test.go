package analysis

import "testing"

// The knee of a CPU curve is the target rate times the median CPU a
// request took over the steps that held their load; the bisection
// brackets it between the largest limit that broke and the smallest that
// held, whatever the order they ran in, leaving out a step that could not
// be verified.
func TestFitKnee(t *testing.T) {
	c := LimitCurve{Resource: LimitCPU, Target: 100, Points: []LimitPoint{
		{CPU: 0.4, Holds: true, Achieved: 100, CPUUsed: 0.21},
		{CPU: 0.2, Achieved: 95, CPUUsed: 0.2},
		{CPU: 0.5, Inconclusive: true, Achieved: 100, CPUUsed: 0.21}, // no bracket
		{CPU: 0.3, Holds: true, Achieved: 100, CPUUsed: 0.22},
		{CPU: 0.25, Achieved: 100, CPUUsed: 0.21},
		{CPU: 0.1, Achieved: 40, CPUUsed: 0.06}, // short of its load: 1.5 ms a request, not a cost
	}}
	k := c.FitKnee()
	if k == nil || k.Steps != 5 || k.Broke != 0.25 || k.Held != 0.3 {
		t.Fatalf("knee %+v, want 5 steps between 0.25 and 0.3", k)
	}
	// costs 2.1, 2.105, 2.1, 2.2 and 2.1 ms a request: their median 2.1
	if k.Fitted < 0.2099 || k.Fitted > 0.2101 {
		t.Errorf("fitted %v cores, want 0.21", k.Fitted)
	}
	m := LimitCurve{Resource: LimitMemory, Target: 100, Points: []LimitPoint{
		{Memory: 100, Holds: true, Peak: 80, CPUUsed: 0.2, Achieved: 100}, {Memory: 50, Peak: 50}, {Memory: 75, Holds: true, Peak: 70}}}
	if k := m.FitKnee(); k == nil || k.Fitted != 0 || k.Broke != 50 || k.Held != 75 || k.LeastPeak != 70 {
		t.Errorf("memory knee %+v, want between 50 and 75, least peak 70, nothing fitted", k)
	}
	if k := (LimitCurve{Resource: LimitCPU, Points: []LimitPoint{{Inconclusive: true}}}).FitKnee(); k != nil {
		t.Errorf("a curve of one unverified step has knee %+v", k)
	}
	// A busy machine's one step, 15.2 of 100/s: nothing to fit on.
	busy := LimitCurve{Resource: LimitCPU, Target: 100, Points: []LimitPoint{{CPU: 1.15, Inconclusive: true, Achieved: 15.2, CPUUsed: 0.0858}}}
	if k := busy.FitKnee(); k != nil {
		t.Errorf("a curve of one unverified step short of its load has knee %+v", k)
	}
}
