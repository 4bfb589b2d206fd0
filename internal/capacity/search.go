package capacity

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// SearchConfig is a capacity search: from Start, the rate multiplied by
// Factor after each passing step up to Max, then Bisect bisections
// between the last passing and the first failing rate; each step runs for
// StepDuration and must meet every gate.
type SearchConfig struct {
	Start, Max, Factor float64
	Bisect             int
	StepDuration       time.Duration
	Gates              []readback.GateSpec // unscoped: the search has one workload
	Plan               *plan.Plan
	// Sweep, when >= 2, makes the search a sweep of that many steps
	// instead (analysis.Sweep): Start, Max, Factor and Bisect do not
	// apply, and SweepVUs are the throughput step's VUs and the constant
	// steps' cap.
	Sweep, SweepVUs int
}

// Search is the run.Strategy of a capacity search: it runs the steps as
// phases of the plan's one cell, each a profile named step-NN with the
// workload at the step's rate, and judges each on the search's gates. As
// a run.Finisher it fails a run in which no rate met them, and gives the
// run its outcome (view.Run.Search), which the caller writes as
// search.md and search.json.
type Search struct {
	cfg      SearchConfig
	cs       analysis.CapacitySearch
	sw       *analysis.Sweep // nil for a capacity search
	steps    []view.SearchStep
	profile  plan.Profile // as expanded for the cell
	workload string       // the workload's name in its profile
	target   string
	stopped  string
}

var (
	_ run.Strategy = (*Search)(nil)
	_ run.Finisher = (*Search)(nil)
)

// NewSearch is the search cfg describes.
func NewSearch(cfg SearchConfig) *Search {
	s := &Search{cfg: cfg, cs: analysis.CapacitySearch{Start: cfg.Start, Max: cfg.Max, Factor: cfg.Factor, Bisect: cfg.Bisect}}
	if cfg.Sweep >= 2 {
		s.sw = &analysis.Sweep{Size: cfg.Sweep}
	}
	return s
}

// stepShape is the load of one step: a rate (the open model), or a number
// of VUs (the closed model) when rate is 0.
type stepShape struct {
	kind string // a sweep's kind of step; "" in a capacity search
	rate float64
	vus  int
}

// next is the next step's load, or done.
func (s *Search) next() (stepShape, bool) {
	if s.sw == nil {
		rate, done := s.cs.Next()
		return stepShape{rate: rate}, done
	}
	kind, rate, done := s.sw.Next()
	sh := stepShape{kind: kind, rate: rate}
	switch kind {
	case analysis.SweepSynchronous:
		sh.vus = 1
	case analysis.SweepThroughput:
		sh.vus = s.cfg.SweepVUs
	}
	return sh, done
}

// record takes a step's outcome.
func (s *Search) record(sh stepShape, st view.SearchStep) {
	if s.sw == nil {
		s.cs.Record(sh.rate, st.Pass, st.ClientBound)
		return
	}
	s.sw.Record(st.Achieved, st.ClientBound)
}

// RunPhases is the cell's phase loop: step after step until the search is
// done, the load is stopped, or a step fails to run.
func (s *Search) RunPhases(ctx context.Context, c *run.Cell, phases []run.Phase) (string, string) {
	pp := phases[0]
	s.profile, s.workload, s.target = pp.Profile, pp.Profile.Workloads[0].Name, pp.Workloads[0].Desc.Target
	for ctx.Err() == nil {
		sh, done := s.next()
		if done {
			return results.StateCompleted, ""
		}
		n := len(s.steps) + 1
		pr := s.profile
		pr.Name, pr.Duration, pr.SLO = fmt.Sprintf("step-%02d", n), s.cfg.StepDuration, nil
		w := s.stepWorkload(pr.Workloads[0], sh)
		pr.Workloads = []plan.Workload{w}
		pw, errs := run.CompileWorkload(s.cfg.Plan, c.Cell, pr, w, false)
		if len(errs) > 0 {
			return results.StateFailed, errors.Join(errs...).Error()
		}
		c.Events().Note(fmt.Sprintf("%s step %d %s", s.what(), n, shapeStr(sh)))
		if state, msg := c.RunPhase(ctx, run.Phase{Profile: pr, Workloads: []run.Workload{pw}}); state != results.StateCompleted {
			s.stopped = run.OneLine(msg)
			return state, msg
		}
		st, err := s.judge(c.Record(), n, sh.rate, pr.Name, pw.Desc.Name)
		if err != nil {
			return results.StateFailed, err.Error()
		}
		st.Kind, st.VUs = sh.kind, sh.vus
		s.record(sh, st)
		s.steps = append(s.steps, st)
		c.Events().Note(fmt.Sprintf("step %d %s: %s", n, shapeStr(sh), stepLine(st)))
	}
	return results.StateCompleted, ""
}

// stepWorkload is the plan's workload w at the step's load: at a rate in
// the open model, else with sh.vus VUs in the closed model. A sweep caps
// its constant steps' VUs at SweepVUs.
func (s *Search) stepWorkload(w plan.Workload, sh stepShape) plan.Workload {
	w.SLO = nil
	if sh.rate <= 0 {
		w.Model, w.Concurrency, w.Rate = plan.Closed, sh.vus, plan.Rate{}
		return w
	}
	w.Model, w.Rate, w.Concurrency = plan.Open, plan.Rate{PerSecond: sh.rate}, 0
	if s.sw != nil {
		w.VUs = plan.VUs{Min: min(max(w.VUs.Min, 1), s.cfg.SweepVUs), Max: s.cfg.SweepVUs}
	}
	return w
}

// what names the search in its progress notes.
func (s *Search) what() string {
	if s.sw != nil {
		return "sweep"
	}
	return "search"
}

// shapeStr is a step's load in words: "at 200/s", "throughput (64 VUs)".
func shapeStr(sh stepShape) string {
	switch {
	case sh.rate > 0 && sh.kind != "":
		return sh.kind + " at " + rateStr(sh.rate)
	case sh.rate > 0:
		return "at " + rateStr(sh.rate)
	}
	return fmt.Sprintf("%s (%d VUs)", sh.kind, sh.vus)
}

// judge reads the step's figures from the store and judges its gates.
func (s *Search) judge(rec *run.Record, n int, rate float64, phase, workload string) (view.SearchStep, error) {
	st := view.SearchStep{N: n, Phase: phase, Rate: rate, Bisect: s.cs.Failed > 0 && s.cs.Passed > 0}
	rep, err := readback.Load(rec.Store)
	if err != nil {
		return st, err
	}
	var sum *analysis.Summary
	for _, w := range rep.Workloads {
		if w.Workload.Name == workload {
			sum = w
		}
	}
	if sum == nil {
		return st, fmt.Errorf("cannot find the figures of search step %d (workload %s)", n, workload)
	}
	checks, err := rec.Store.Checks()
	if err != nil {
		return st, err
	}
	st.Gates = readback.JudgeGates(s.cfg.Gates, []*analysis.Summary{sum}, readback.CheckFigures(checks))
	fillStep(&st, sum)
	limited, limitWhy := analysis.GeneratorLimited(sum, rep.PhaseResources(phase))
	why := gatesWhy(st.Gates)
	switch {
	case !st.RateShort():
	case s.sw != nil:
		why = append(why, fmt.Sprintf("over-saturated: achieved %.1f/s, under %.0f %% of the rate", st.Achieved, 100*view.MinAchieved))
	default:
		why = append(why, fmt.Sprintf("achieved %.1f/s, under %.0f %% of the rate", st.Achieved, 100*view.MinAchieved))
	}
	// Latency counts from each arrival's intended start, so a generator
	// that lagged only made a passing step look worse: it still passes.
	// A failing step is the generator's when it was the limit.
	st.Pass = len(why) == 0
	if limited && !st.Pass {
		st.ClientBound, st.ClientWhy = true, limitWhy
		why = append(why, "client-bound: "+limitWhy)
	}
	st.Why = strings.Join(why, "; ")
	st.Insufficient = !st.Pass && st.TooFewToJudge()
	return st, nil
}

// gatesWhy is why each gate that did not pass did not, one short phrase
// each: a phrase holds no semicolon, which separates them.
func gatesWhy(gates []view.Gate) []string {
	var why []string
	for _, g := range gates {
		switch g.State {
		case analysis.GateFail:
			why = append(why, fmt.Sprintf("%s failed: %s", g.Expr, g.Measured))
		case analysis.GateInsufficient:
			why = append(why, fmt.Sprintf("%s: insufficient data (%s)", g.Expr, strings.ReplaceAll(g.Note, "; ", ", ")))
		}
	}
	return why
}

// fillStep copies the figures of the step's workload.
func fillStep(st *view.SearchStep, sum *analysis.Summary) {
	st.Achieved, st.Dropped, st.LLM = sum.Rate, sum.Dropped, stepLLM(sum)
	var reqs, ok int64
	for _, op := range sum.Ops {
		reqs, ok = reqs+op.Requests, ok+op.OK
	}
	if reqs > 0 {
		st.ErrorRate = float64(reqs-ok) / float64(reqs)
	}
	if len(sum.Ops) == 1 {
		q := sum.Ops[0].Latency
		st.P50, st.P99, st.Count = q.P50, q.P99, q.Count
		return
	}
	merged := stats.NewHist()
	for _, op := range sum.Ops {
		if op.Whole != nil {
			merged.Merge(op.Whole.Latency)
		}
	}
	q := analysis.QuantilesOf(merged)
	st.P50, st.P99, st.Count = q.P50, q.P99, q.Count
}

// result is the search's outcome, with the resources of the step at the
// highest sustainable rate from the finished run.
func (s *Search) result(rep *view.Run) *view.Search {
	cfg := s.cfg
	out := &view.Search{Plan: cfg.Plan.Name, Dir: rep.Dir, Command: rep.Command, Profile: cfg.Plan.Profiles[0].Name,
		Workload: s.workload, Target: s.target, Start: cfg.Start, Max: cfg.Max, Factor: cfg.Factor, Bisect: cfg.Bisect,
		StepDuration: cfg.StepDuration, Steps: s.steps, Sustained: s.cs.Passed, Failed: s.cs.Failed,
		Limit: s.cs.Limit(), Stopped: s.stopped}
	for _, g := range s.cfg.Gates {
		out.Gates = append(out.Gates, g.Expr)
	}
	if s.sw != nil {
		s.sweepResult(out)
	}
	if s.stopped != "" {
		out.Limit = "stopped"
	}
	if k, ok := analysis.FindKnee(s.kneePoints()); ok {
		out.Knee = &k
	}
	for _, st := range s.steps {
		if st.Rate == out.Sustained && st.Pass {
			out.Resources = rep.PhaseResources(st.Phase)
		}
	}
	return out
}

// stepLine is a step's outcome on one line of progress.
func stepLine(st view.SearchStep) string {
	line := fmt.Sprintf("%.1f/s achieved, p99 %v", st.Achieved, st.P99.Round(10*time.Microsecond))
	if st.Pass {
		return "pass (" + line + ")"
	}
	return st.Verdict() + " (" + line + "): " + st.Why
}

func rateStr(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) + "/s" }

// Judge is the search's verdict after the run's: a run that completed
// without any rate meeting the SLO fails. It also gives the report the
// search's outcome.
func (s *Search) Judge(rep *view.Run, status results.Status, err error) (results.Status, error) {
	res := s.result(rep)
	rep.Search = res
	if s.sw != nil {
		return s.judgeSweep(res, status, err)
	}
	if err != nil || res.Sustained != 0 {
		return status, err
	}
	status = results.Status{State: results.StateCompleted, Ended: time.Now(), ExitCode: run.ExitFailed,
		Message: "capacity search: no rate met the SLO"}
	hint := "search.md lists each step with the gates it failed; lower --start, or check the target with perflab run"
	if len(res.Steps) > 0 && res.Steps[0].Insufficient {
		hint = "no gate failed, but the first step had too few requests to judge them: lengthen --step-duration or raise --start"
	}
	return status, &run.Failure{Err: errors.New(status.Message + "; " + strings.ReplaceAll(searchWhy(res), "**", "")), Hint: hint, Code: run.ExitFailed}
}

// searchWhy is why the first step failed.
func searchWhy(s *view.Search) string {
	if len(s.Steps) == 0 {
		return "no step ran"
	}
	return fmt.Sprintf("at %s: %s", rateStr(s.Steps[0].Rate), s.Steps[0].Why)
}

// CheckSearchPlan checks that p is one cell with one profile holding one
// open-model workload without stages, and a warm-up shorter than a step.
func CheckSearchPlan(p *plan.Plan, step time.Duration) error {
	if err := checkOneWorkload(p, step, "perflab search", "raises the rate of"); err != nil {
		return err
	}
	pr := p.Profiles[0]
	if w := pr.Workloads[0]; w.Model != plan.Open || len(w.Stages) > 0 {
		return run.Invalid("workload %s of profile %s: perflab search needs an open-model workload at a constant rate (rate: …), not stages or a concurrency", w.Name, pr.Name)
	}
	return nil
}
