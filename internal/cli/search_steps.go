package cli

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
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// minAchieved is the share of its rate a step must achieve to pass: below
// it the step did not run at the rate it stands for.
const minAchieved = 0.95

// searcher runs the steps of a capacity search as phases of one cell, each
// a profile named step-NN with the workload at the step's rate, and judges
// each on the search's gates.
type searcher struct {
	cfg      *searchConfig
	r        *planRun
	cs       analysis.CapacitySearch
	steps    []report.SearchStep
	profile  plan.Profile // as expanded for the cell
	workload string       // the workload's name in its profile
	target   string
	stopped  string
}

func newSearcher(cfg *searchConfig, r *planRun) *searcher {
	return &searcher{cfg: cfg, r: r, cs: analysis.CapacitySearch{Start: cfg.start, Max: cfg.max,
		Factor: cfg.flags.factor, Bisect: cfg.flags.bisect}}
}

// run is the cell's phase loop (planRun.phases): step after step until the
// search is done, the load is stopped, or a step fails to run.
func (s *searcher) run(ctx context.Context, c plan.Cell, phases []phasePlan) (string, string) {
	pp := phases[0]
	s.profile, s.workload, s.target = pp.profile, pp.profile.Workloads[0].Name, pp.workloads[0].desc.Target
	for ctx.Err() == nil {
		rate, done := s.cs.Next()
		if done {
			return results.StateCompleted, ""
		}
		n := len(s.steps) + 1
		pr := s.profile
		pr.Name, pr.Duration, pr.SLO = fmt.Sprintf("step-%02d", n), s.cfg.flags.stepDuration, nil
		w := pr.Workloads[0]
		w.Rate, w.SLO = plan.Rate{PerSecond: rate}, nil
		pr.Workloads = []plan.Workload{w}
		pw, errs := prepareWorkload(s.r.p, c, pr, w, false)
		if len(errs) > 0 {
			return results.StateFailed, errors.Join(errs...).Error()
		}
		fmt.Fprintf(s.r.e.stderr, "perflab: search step %d at %s\n", n, rateStr(rate))
		if state, msg := s.r.runPhase(ctx, c, phasePlan{profile: pr, workloads: []phaseWorkload{pw}}); state != results.StateCompleted {
			s.stopped = oneLine(msg)
			return state, msg
		}
		st, err := s.judge(n, rate, pr.Name, pw.desc.Name)
		if err != nil {
			return results.StateFailed, err.Error()
		}
		s.cs.Record(rate, st.Pass, st.ClientBound)
		s.steps = append(s.steps, st)
		fmt.Fprintf(s.r.e.stderr, "perflab: step %d at %s: %s\n", n, rateStr(rate), stepLine(st))
	}
	return results.StateCompleted, ""
}

// judge reads the step's figures from the store and judges its gates.
func (s *searcher) judge(n int, rate float64, phase, workload string) (report.SearchStep, error) {
	st := report.SearchStep{N: n, Phase: phase, Rate: rate, Bisect: s.cs.Failed > 0 && s.cs.Passed > 0}
	rep, err := readback.Load(s.r.store)
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
	checks, err := s.r.store.Checks()
	if err != nil {
		return st, err
	}
	st.Gates = readback.JudgeGates(s.cfg.gates, []*analysis.Summary{sum}, readback.CheckFigures(checks))
	fillStep(&st, sum)
	limited, limitWhy := analysis.GeneratorLimited(sum, readback.PhaseResources(rep, phase))
	var why []string
	for _, g := range st.Gates {
		switch g.State {
		case analysis.GateFail:
			why = append(why, fmt.Sprintf("%s: %s", g.Expr, g.Measured))
		case analysis.GateInsufficient:
			why = append(why, fmt.Sprintf("%s: insufficient data (%s)", g.Expr, g.Note))
		}
	}
	if st.Achieved < minAchieved*rate {
		why = append(why, fmt.Sprintf("achieved %.1f/s, under %.0f %% of the rate", st.Achieved, 100*minAchieved))
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
	return st, nil
}

// fillStep copies the figures of the step's workload.
func fillStep(st *report.SearchStep, sum *analysis.Summary) {
	st.Achieved, st.Dropped = sum.Rate, sum.Dropped
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
func (s *searcher) result(rep *report.Run) *report.Search {
	f := s.cfg.flags
	out := &report.Search{Plan: s.cfg.p.Name, Dir: rep.Dir, Command: rep.Command, Profile: s.cfg.p.Profiles[0].Name,
		Workload: s.workload, Target: s.target, Start: s.cfg.start, Max: s.cfg.max, Factor: f.factor, Bisect: f.bisect,
		StepDuration: f.stepDuration, Steps: s.steps, Sustained: s.cs.Passed, Failed: s.cs.Failed,
		Limit: s.cs.Limit(), Stopped: s.stopped}
	for _, g := range s.cfg.gates {
		out.Gates = append(out.Gates, g.Expr)
	}
	if s.stopped != "" {
		out.Limit = "stopped"
	}
	var pts []analysis.RateLatency
	for _, st := range s.steps {
		pts = append(pts, analysis.RateLatency{Rate: st.Rate, P99: st.P99, Count: st.Count})
	}
	if k, ok := analysis.FindKnee(pts); ok {
		out.Knee = &k
	}
	for _, st := range s.steps {
		if st.Rate == out.Sustained && st.Pass {
			out.Resources = readback.PhaseResources(rep, st.Phase)
		}
	}
	return out
}

// stepLine is a step's outcome on one line of progress.
func stepLine(st report.SearchStep) string {
	line := fmt.Sprintf("%.1f/s achieved, p99 %v", st.Achieved, st.P99.Round(10*time.Microsecond))
	if st.Pass {
		return "pass (" + line + ")"
	}
	return "fail (" + line + "): " + st.Why
}

func rateStr(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) + "/s" }
