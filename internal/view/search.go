package view

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// Search is the outcome of a capacity search: the steps it ran, the
// highest rate at which every SLO gate passed, the knee of the latency
// curve, the resources at that rate, and what set the limit.
type Search struct {
	Plan         string
	Dir          string
	Command      string
	Profile      string
	Workload     string // the workload's name in its profile
	Target       string
	Gates        []string
	Start, Max   float64
	Factor       float64
	Bisect       int
	StepDuration time.Duration
	Steps        []SearchStep
	Sustained    float64 // the highest rate that passed; 0 when none did
	Failed       float64 // the lowest rate that failed; 0 when none did
	// Limit is what ended the search: "target", "generator", "max",
	// "start", or "stopped" when it did not run to its end.
	Limit     string
	Stopped   string              // why the search stopped early (interrupt, a component exited)
	Knee      *analysis.Knee      // nil when no step is past it
	Resources *analysis.Resources // of the step at Sustained; nil when none
	// Sweep is what a sweep found, when the search was one (perflab search
	// --sweep): its Limit is then analysis.Sweep's.
	Sweep *Sweep
}

// SearchStep is one step: a run of the workload at one rate.
type SearchStep struct {
	N           int
	Phase       string // the profile name the step ran as, in report.md
	Rate        float64
	Bisect      bool    // a bisection step, not a growth step
	Achieved    float64 // operations completed per second in the window
	P50, P99    time.Duration
	Count       int64 // latencies in the window
	ErrorRate   float64
	Dropped     int64
	ClientBound bool   // the generator, not the target, was the limit (analysis.GeneratorLimited)
	ClientWhy   string // why it was
	Pass        bool
	// Insufficient says the step neither passed nor failed: no gate
	// failed, but some had too few values in the window to be judged (a
	// p99 needs 100), and the step achieved its rate with the generator
	// keeping up. It fails neither the step nor a sweep.
	Insufficient bool
	Gates        []Gate
	Why          string // why the step did not pass
	// Kind and VUs are a sweep step's: analysis.SweepSynchronous,
	// SweepThroughput (closed, VUs) or SweepConstant (Rate); "" in a
	// capacity search.
	Kind string
	VUs  int
	LLM  *StepLLM // nil unless the workload streamed tokens
}

// TooFewToJudge reports whether the step did not pass only because some
// gate had insufficient data: none failed, it achieved its rate and the
// generator kept up. A longer or faster step would have more data.
func (st SearchStep) TooFewToJudge() bool {
	insufficient := false
	for _, g := range st.Gates {
		switch g.State {
		case analysis.GateFail:
			return false
		case analysis.GateInsufficient:
			insufficient = true
		}
	}
	return insufficient && !st.ClientBound && !st.RateShort()
}

// MinAchieved is the share of its rate a step must achieve to pass: below
// it the step did not run at the rate it stands for (a sweep's step is
// over-saturated).
const MinAchieved = 0.95

// RateShort reports whether the step achieved less than MinAchieved of
// its rate; a closed-model step (rate 0) never does.
func (st SearchStep) RateShort() bool { return st.Achieved < MinAchieved*st.Rate }

// Verdict is the step's verdict in words: "pass", "fail" or
// "insufficient data".
func (st SearchStep) Verdict() string {
	switch {
	case st.Pass:
		return "pass"
	case st.Insufficient:
		return "insufficient data"
	}
	return "fail"
}

// FailedGate reports whether a gate failed on the step.
func (st SearchStep) FailedGate() bool {
	for _, g := range st.Gates {
		if g.State == analysis.GateFail {
			return true
		}
	}
	return false
}

// Sweep is what a sweep found (perflab search --sweep): the synchronous
// rate, the throughput, the constant rates between, and the first of them
// the target could not keep up with.
type Sweep struct {
	Size       int // steps asked for
	VUs        int // of the throughput step, and the cap of the constant steps
	Sync       float64
	Throughput float64
	Rates      []float64
	Saturated  float64 // the first over-saturated rate; 0 if none
}

// StepLLM are an LLM step's figures besides latency: time to first token,
// inter-token latency, output tokens per second and goodput.
type StepLLM struct {
	TTFTP50, TTFTP99, ITLP50 time.Duration
	OutputTokensPS           float64           // every stream together
	PerUserTokensPS          float64           // one stream's own rate: 1 / TPOT p50; 0 without TPOT
	Goodput                  *analysis.Goodput // nil without goodput bounds
}
