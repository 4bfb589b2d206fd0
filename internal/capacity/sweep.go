package capacity

import (
	"errors"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// A sweep (SearchConfig.Sweep) is the Search's other way of choosing
// steps, as guidellm's sweep: one request at a time, as fast as it goes,
// then constant rates between, until one is over-saturated. Its steps,
// figures, report and files are the capacity search's; this file holds
// what differs.

// stepLLM is a step's figures besides latency when its workload streamed
// tokens (every operation together), or nil.
func stepLLM(sum *analysis.Summary) *view.StepLLM {
	ttft := sum.Measures[stats.TTFT]
	if ttft.Count == 0 {
		return nil
	}
	l := &view.StepLLM{TTFTP50: ttft.P50, TTFTP99: ttft.P99, ITLP50: sum.Measures[stats.ITL].P50}
	var out int64
	for _, op := range sum.Ops {
		out += op.Counters[stats.OutputTokens]
	}
	if sum.Seconds > 0 {
		l.OutputTokensPS = float64(out) / sum.Seconds
	}
	if tpot := sum.Measures[stats.TPOT].P50; tpot > 0 {
		l.PerUserTokensPS = 1 / tpot.Seconds()
	}
	if g, ok := sum.Goodput(); ok {
		l.Goodput = &g
	}
	return l
}

// sweepResult fills in what a sweep found: its rates and limit, the highest
// constant rate that passed (gates met, not over-saturated) and the lowest
// that failed (a step with insufficient data did neither).
func (s *Search) sweepResult(out *view.Search) {
	sw := s.sw
	out.Sweep = &view.Sweep{Size: sw.Size, VUs: s.cfg.SweepVUs, Sync: sw.Sync, Throughput: sw.Throughput,
		Rates: sw.Rates, Saturated: sw.Saturated}
	out.Limit, out.Sustained, out.Failed = sw.Limit(), 0, 0
	for _, st := range s.steps {
		switch {
		case st.Kind != analysis.SweepConstant:
		case st.Pass && st.Rate > out.Sustained:
			out.Sustained = st.Rate
		case !st.Pass && !st.Insufficient && (out.Failed == 0 || st.Rate < out.Failed):
			out.Failed = st.Rate
		}
	}
}

// kneePoints are the steps the knee is found among: every step of a
// capacity search; of a sweep the synchronous step, at the rate it
// achieved, and the constant ones (the throughput step queues as many
// requests as it has VUs, so its latency is no point of the curve).
func (s *Search) kneePoints() []analysis.RateLatency {
	var pts []analysis.RateLatency
	for _, st := range s.steps {
		rate := st.Rate
		switch st.Kind {
		case analysis.SweepSynchronous:
			rate = st.Achieved
		case analysis.SweepThroughput:
			continue
		}
		pts = append(pts, analysis.RateLatency{Rate: rate, P99: st.P99, Count: st.Count})
	}
	return pts
}

// judgeSweep is a sweep's verdict after the run's: it fails when nothing
// completed one request at a time, or when gates were given, no step met
// them and some step failed one. Steps with too few requests to judge a
// gate, or over-saturated ones, do not fail it by themselves.
func (s *Search) judgeSweep(res *view.Search, status results.Status, err error) (results.Status, error) {
	passed, failed := false, false
	for _, st := range res.Steps {
		passed, failed = passed || st.Pass, failed || st.FailedGate()
	}
	var msg, hint string
	switch {
	case err != nil || res.Limit == "stopped":
		return status, err
	case s.sw.Sync <= 0:
		msg, hint = "sweep: no request completed one at a time", "report.md shows the synchronous step's errors; check the target with perflab run"
	case len(s.cfg.Gates) > 0 && !passed && failed:
		msg, hint = "sweep: no step met the SLO", "search.md lists each step with the gates it failed"
	default:
		return status, nil
	}
	status = results.Status{State: results.StateCompleted, Ended: time.Now(), ExitCode: run.ExitFailed, Message: msg}
	return status, &run.Failure{Err: errors.New(msg), Hint: hint, Code: run.ExitFailed}
}

// CheckSweepPlan checks that p is one cell with one profile holding one
// workload without stages (open or closed: a sweep sets the model of each
// step), and a warm-up shorter than a step.
func CheckSweepPlan(p *plan.Plan, step time.Duration) error {
	if err := checkOneWorkload(p, step, "perflab search --sweep", "sweeps the load of"); err != nil {
		return err
	}
	if w := p.Profiles[0].Workloads[0]; len(w.Stages) > 0 {
		return run.Invalid("workload %s of profile %s: perflab search --sweep sets each step's load; remove the stages", w.Name, p.Profiles[0].Name)
	}
	return nil
}

// checkOneWorkload checks that p is one cell with one profile holding one
// workload, whose warm-up is shorter than a step; cmd names the command,
// verb what it does to the workload.
func checkOneWorkload(p *plan.Plan, step time.Duration, cmd, verb string) error {
	if n := len(p.Cells()); n != 1 {
		return run.Invalid("%s runs one configuration, and the plan's matrix has %d cells: remove the matrix or copy the plan per configuration", cmd, n)
	}
	if len(p.Profiles) != 1 {
		var names []string
		for _, pr := range p.Profiles {
			names = append(names, pr.Name)
		}
		return run.Invalid("%s uses one profile: give --profile NAME (the plan has %s)", cmd, strings.Join(names, ", "))
	}
	pr := p.Profiles[0]
	if len(pr.Workloads) != 1 {
		return run.Invalid("%s %s one workload, and profile %s has %d: make a profile with the one to search with", cmd, verb, pr.Name, len(pr.Workloads))
	}
	if pr.Warmup >= step {
		return run.Invalid("profile %s has a warm-up of %v, as long as a step (--step-duration %v)", pr.Name, pr.Warmup, step)
	}
	return nil
}
