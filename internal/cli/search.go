package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/units"
)

// searchFlags are the flags of perflab search.
type searchFlags struct {
	profile, out, start, max string
	factor                   float64
	bisect                   int
	stepDuration             time.Duration
	slo                      listFlag
}

func (f *searchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.profile, "profile", "", "the profile whose workload to search with (default: the plan's only profile)")
	fs.Var(&f.slo, "slo", "SLO gate every step must pass, e.g. 'p99 < 200ms' (repeatable); added to the plan's slo of the profile and workload")
	fs.StringVar(&f.start, "start", "100/s", "rate of the first step")
	fs.StringVar(&f.max, "max", "100000/s", "highest rate to try")
	fs.Float64Var(&f.factor, "step-factor", 2, "multiply the rate by this after each passing step, until one fails")
	fs.IntVar(&f.bisect, "bisect", 4, "then bisect this many times between the last passing and the first failing rate")
	fs.DurationVar(&f.stepDuration, "step-duration", 20*time.Second, "how long each step applies its rate")
	fs.StringVar(&f.out, "out", "perflab-runs", "parent directory for the run directory")
}

// searchConfig is a search checked and ready to run.
type searchConfig struct {
	flags      searchFlags
	start, max float64
	p          *plan.Plan
	b          plan.Builtins
	gates      []gateSpec // unscoped: the search has one workload
	command    string
}

// search is `perflab search PLAN --slo EXPR …`: find the highest rate of
// the profile's workload at which every SLO gate passes.
func (e *env) search(ctx context.Context, args []string) error {
	var f searchFlags
	fs := newFlagSet("search", e)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab search PLAN.yaml --slo 'p99 < 200ms' [--profile NAME] [--start 100/s] [--max 100000/s] [--step-factor 2] [--bisect 4] [--step-duration 20s] [--out DIR]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab search needs exactly one plan file, got %d arguments", len(pos))
	}
	cfg, err := checkSearch(f, pos[0])
	if err != nil {
		return err
	}
	if cfg.p.Repeat > 1 {
		fmt.Fprintf(e.stderr, "perflab: note: perflab search runs each step once; the plan's repeat: %d is for perflab run\n", cfg.p.Repeat)
		cfg.p.Repeat = 1
	}
	e.useScrubber(planScrubber(cfg.p))
	cfg.command = recordedCommand(append([]string{"perflab", "search"}, args...))
	return e.runSearch(ctx, cfg)
}

// checkSearch checks the flags and the plan: one cell, one profile with one
// open-model workload at a constant rate, and at least one gate.
func checkSearch(f searchFlags, path string) (*searchConfig, error) {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	cfg := &searchConfig{flags: f}
	var err error
	if cfg.start, err = units.ParseRate(f.start); err != nil || cfg.start <= 0 {
		bad("--start %q: want a positive rate like 100/s", f.start)
	}
	if cfg.max, err = units.ParseRate(f.max); err != nil || cfg.max <= 0 {
		bad("--max %q: want a positive rate like 100000/s", f.max)
	} else if cfg.max < cfg.start {
		bad("--max %s is below --start %s", f.max, f.start)
	}
	if !(f.factor > 1) {
		bad("--step-factor %v must be > 1", f.factor)
	}
	if f.bisect < 0 {
		bad("--bisect %d must be >= 0", f.bisect)
	}
	if f.stepDuration < 2*time.Second {
		bad("--step-duration %v: want at least 2s (the first second of each step is trimmed as warm-up)", f.stepDuration)
	}
	if _, errs := analysis.ParseGates(f.slo); len(errs) > 0 {
		for _, e := range errs {
			bad("--slo: %v", e)
		}
	}
	if len(problems) > 0 {
		return nil, usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	if cfg.p, err = loadPlan(path, f.profile); err != nil {
		return nil, err
	}
	if err := checkSLOWorkloads(cfg.p, f.slo); err != nil {
		return nil, err
	}
	if err := searchShape(cfg.p, f.stepDuration); err != nil {
		return nil, err
	}
	for _, g := range gateSpecs(cfg.p, f.slo) {
		cfg.gates = append(cfg.gates, gateSpec{Expr: g.Expr})
	}
	if len(cfg.gates) == 0 {
		return nil, usageErrorf("perflab search needs an SLO to search against: --slo 'p99 < 200ms' (repeatable), or slo: in the plan's profile or workload")
	}
	if cfg.b, err = builtins(filepath.Join(f.out, "RUN_DIR")); err != nil {
		return nil, &runError{err: err, code: ExitFailed}
	}
	if problems := append(checkPlan(cfg.p, cfg.b), commandProblems(cfg.p, cfg.b)...); len(problems) > 0 {
		return nil, invalidPlan(problems)
	}
	return cfg, nil
}

// searchShape checks that p is one cell with one profile holding one
// open-model workload without stages.
func searchShape(p *plan.Plan, step time.Duration) error {
	if n := len(p.Cells()); n != 1 {
		return usageErrorf("perflab search runs one configuration, and the plan's matrix has %d cells: remove the matrix or copy the plan per configuration", n)
	}
	if len(p.Profiles) != 1 {
		var names []string
		for _, pr := range p.Profiles {
			names = append(names, pr.Name)
		}
		return usageErrorf("perflab search uses one profile: give --profile NAME (the plan has %s)", strings.Join(names, ", "))
	}
	pr := p.Profiles[0]
	if len(pr.Workloads) != 1 {
		return usageErrorf("perflab search raises the rate of one workload, and profile %s has %d: make a profile with the one to search with", pr.Name, len(pr.Workloads))
	}
	if w := pr.Workloads[0]; w.Model != plan.Open || len(w.Stages) > 0 {
		return usageErrorf("workload %s of profile %s: perflab search needs an open-model workload at a constant rate (rate: …), not stages or a concurrency", w.Name, pr.Name)
	}
	if pr.Warmup >= step {
		return usageErrorf("profile %s has a warm-up of %v, as long as a step (--step-duration %v)", pr.Name, pr.Warmup, step)
	}
	return nil
}

// runSearch starts the plan's components once, runs the steps against them
// as phases of the one cell, and writes the run's reports and the search's.
func (e *env) runSearch(ctx context.Context, cfg *searchConfig) error {
	p := cfg.p
	params, _ := json.Marshal(map[string]any{"start": cfg.start, "max": cfg.max, "step_factor": cfg.flags.factor,
		"bisect": cfg.flags.bisect, "step_duration": cfg.flags.stepDuration.String(), "slo": cfg.gates})
	store, err := e.createPlanRun(cfg.flags.out, p, &cfg.b, results.Meta{Name: p.Name + "-search",
		Command: cfg.command, Extra: map[string]string{"search": string(params)}})
	if err != nil {
		return err
	}
	defer store.Close()
	stop, kill, release := e.signals(ctx)
	defer release()
	sink, stop := e.newStoreSink(store, stop)
	r := &planRun{e: e, p: p, store: store, b: cfg.b, cells: 1, stop: stop, kill: kill,
		sink: sink, progress: report.NewProgress(e.stderr, e.tty)}
	s := newSearcher(cfg, r)
	r.phases = s.run
	var failed []string
	c := p.Cells()[0]
	if state, msg := r.runCell(c); state == results.StateFailed {
		failed = append(failed, fmt.Sprintf("cell %s: %s", c.Name, oneLine(msg)))
	}
	return e.finishSearch(store, sink, s, func(rep *report.Run) (results.Status, error) {
		return judgePlan(rep, stop.Err() != nil, sink.err(), failed)
	})
}

// finishSearch records how the run ended, writes the run's reports, the
// search's report (search.md, search.json) and prints the search summary.
// When the store failed (sink), it still writes what it can, and its error
// says so first.
func (e *env) finishSearch(store *results.Run, sink *storeSink, s *searcher, judge func(*report.Run) (results.Status, error)) error {
	rep, err := loadRun(store)
	if err != nil {
		if sink.err() != nil {
			return e.storeFailure(store, nil, sink.err(), nil, []error{err})
		}
		return &runError{err: err, code: ExitFailed}
	}
	status, runErr := judge(rep)
	res := s.result(rep)
	if runErr == nil && res.Sustained == 0 {
		status = results.Status{State: results.StateCompleted, Ended: time.Now(), ExitCode: ExitFailed,
			Message: "capacity search: no rate met the SLO"}
		hint := "search.md lists each step with the gates it failed; lower --start, or check the target with perflab run"
		if len(res.Steps) > 0 && res.Steps[0].TooFewToJudge() {
			hint = "no gate failed, but the first step had too few requests to judge them: lengthen --step-duration or raise --start"
		}
		runErr = &runError{err: errors.New(status.Message + "; " + strings.ReplaceAll(searchWhy(res), "**", "")), code: ExitFailed, hint: hint}
	}
	finishErr := store.Finish(status)
	rep.State, rep.Message, rep.Ended = status.State, status.Message, status.Ended
	rep.Search = res
	var others []error
	if err := writeReports(store, rep); err != nil {
		others = append(others, err)
	}
	if err := writeFile(store.Path("search.md"), func(f *os.File) error { return report.SearchMarkdown(f, res) }); err != nil {
		others = append(others, err)
	}
	if err := writeFile(store.Path("search.json"), func(f *os.File) error { return report.SearchJSON(f, res) }); err != nil {
		others = append(others, err)
	}
	if err := report.SearchTerminal(e.stdout, res); err != nil {
		others = append(others, err)
	}
	fmt.Fprintf(e.stderr, "run directory: %s\nsearch:        %s\nreport:        %s\n",
		store.Dir(), store.Path("search.md"), store.Path("report.md"))
	if sink.err() != nil || finishErr != nil {
		return e.storeFailure(store, rep, sink.err(), finishErr, others)
	}
	if len(others) > 0 {
		return &runError{err: errors.Join(others...), code: ExitFailed}
	}
	return runErr
}

// searchWhy is why the first step failed.
func searchWhy(s *report.Search) string {
	if len(s.Steps) == 0 {
		return "no step ran"
	}
	return fmt.Sprintf("at %s: %s", rateStr(s.Steps[0].Rate), s.Steps[0].Why)
}

// writeFile creates path and fills it with render.
func writeFile(path string, render func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	return nil
}
