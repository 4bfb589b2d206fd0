package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/capacity"
	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/view"
)

// searchFlags are the flags of perflab search.
type searchFlags struct {
	profile, out, start, max string
	factor                   float64
	bisect, sweep, sweepVUs  int
	stepDuration             time.Duration
	slo                      listFlag
	ci                       ciFlags
	set                      map[string]bool // the flags given
}

func (f *searchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.profile, "profile", "", "the profile whose workload to search with (default: the plan's only profile)")
	fs.Var(&f.slo, "slo", "SLO gate every step must pass, e.g. 'p99 < 200ms' (repeatable); added to the plan's slo of the profile and workload")
	fs.StringVar(&f.start, "start", "100/s", "rate of the first step")
	fs.StringVar(&f.max, "max", "100000/s", "highest rate to try")
	fs.Float64Var(&f.factor, "step-factor", 2, "multiply the rate by this after each passing step, until one fails")
	fs.IntVar(&f.bisect, "bisect", 4, "then bisect this many times between the last passing and the first failing rate")
	fs.DurationVar(&f.stepDuration, "step-duration", 20*time.Second, "how long each step applies its rate")
	fs.IntVar(&f.sweep, "sweep", 0, "sweep in N steps instead, as guidellm does: one request at a time, as fast as it goes (--sweep-vus), then N-2 rates between, until one is over-saturated")
	fs.IntVar(&f.sweepVUs, "sweep-vus", 0, "VUs of the sweep's as-fast-as-it-goes step, and the most its rate steps use (default: the workload's concurrency or vus.max)")
	fs.StringVar(&f.out, "out", "perflab-runs", "parent directory for the run directory")
	f.ci.register(fs)
}

// searchConfig is a search checked and ready to run.
type searchConfig struct {
	capacity.SearchConfig
	flags   searchFlags
	b       plan.Builtins
	command string
}

// search is `perflab search PLAN --slo EXPR …`: find the highest rate of
// the profile's workload at which every SLO gate passes.
func (e *env) search(ctx context.Context, args []string) error {
	var f searchFlags
	fs := newFlagSet("search", e)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab search PLAN.yaml --slo 'p99 < 200ms' [--profile NAME] [--start 100/s] [--max 100000/s] [--step-factor 2] [--bisect 4] [--step-duration 20s] [--out DIR | --run-dir DIR] [--junit FILE] [--csv FILE]")
		fmt.Fprintln(fs.Output(), "       perflab search PLAN.yaml --sweep N [--sweep-vus N] [--slo EXPR] [--profile NAME] [--step-duration 20s] [--out DIR | --run-dir DIR] [--junit FILE] [--csv FILE]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab search needs exactly one plan file, got %d arguments", len(pos))
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.ci.check(f.set["out"]); err != nil {
		return err
	}
	cfg, err := checkSearch(f, pos[0])
	if err != nil {
		return err
	}
	e.ci = f.ci.withPlan(cfg.Plan)
	e.ci.name = cfg.Plan.Name + "-search"
	if cfg.Plan.Repeat > 1 {
		fmt.Fprintf(e.stderr, "perflab: note: perflab search runs each step once; the plan's repeat: %d is for perflab run\n", cfg.Plan.Repeat)
		cfg.Plan.Repeat = 1
	}
	e.useScrubber(registry.Scrubber(cfg.Plan))
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
	if cfg.Start, err = opRate("--start", f.start); err != nil {
		bad("%v", err)
	} else if cfg.Start <= 0 {
		bad("--start %q: want a positive rate like 100/s", f.start)
	}
	if cfg.Max, err = opRate("--max", f.max); err != nil {
		bad("%v", err)
	} else if cfg.Max <= 0 {
		bad("--max %q: want a positive rate like 100000/s", f.max)
	} else if cfg.Max < cfg.Start {
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
	if _, errs := slo.ParseGates(f.slo); len(errs) > 0 {
		for _, e := range errs {
			bad("--slo: %v", e)
		}
	}
	problems = append(problems, sweepFlagProblems(f)...)
	if len(problems) > 0 {
		return nil, usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	cfg.Factor, cfg.Bisect, cfg.StepDuration, cfg.Sweep = f.factor, f.bisect, f.stepDuration, f.sweep
	if cfg.Plan, err = run.LoadPlan(path, f.profile); err != nil {
		return nil, err
	}
	if err := run.CheckSLOWorkloads(cfg.Plan, f.slo); err != nil {
		return nil, err
	}
	if err := checkSearchPlan(cfg, f); err != nil {
		return nil, err
	}
	for _, g := range run.GateSpecs(cfg.Plan, f.slo) {
		cfg.Gates = append(cfg.Gates, readback.GateSpec{Expr: g.Expr})
	}
	if len(cfg.Gates) == 0 && f.sweep == 0 {
		return nil, usageErrorf("perflab search needs an SLO to search against: --slo 'p99 < 200ms' (repeatable), or slo: in the plan's profile or workload")
	}
	if cfg.b, err = run.Builtins(filepath.Join(f.out, "RUN_DIR")); err != nil {
		return nil, &runError{err: err, code: ExitFailed}
	}
	planProblems := append(run.Check(cfg.Plan, cfg.b), run.CommandProblems(cfg.Plan, cfg.b)...)
	if planProblems = append(planProblems, run.OpenFileProblems(cfg.Plan, 1)...); len(planProblems) > 0 {
		return nil, run.InvalidPlan(planProblems)
	}
	return cfg, nil
}

// runSearch starts the plan's components once, runs the steps against them
// as phases of the one cell, and writes the run's reports and the search's.
func (e *env) runSearch(ctx context.Context, cfg *searchConfig) error {
	p := cfg.Plan
	params, _ := json.Marshal(map[string]any{"start": cfg.Start, "max": cfg.Max, "step_factor": cfg.Factor,
		"bisect": cfg.Bisect, "step_duration": cfg.StepDuration.String(), "slo": cfg.Gates})
	if cfg.Sweep > 0 {
		params, _ = json.Marshal(map[string]any{"sweep": cfg.Sweep, "sweep_vus": cfg.SweepVUs,
			"step_duration": cfg.StepDuration.String(), "slo": cfg.Gates})
	}
	job := e.job(cfg.flags.out, results.Meta{Name: p.Name + "-search", Command: cfg.command,
		Extra: map[string]string{"search": string(params)}})
	job.Plan, job.Builtins, job.SampleEvery, job.Strategy = p, cfg.b, p.SampleInterval, capacity.NewSearch(cfg.SearchConfig)
	job.Files = searchFiles
	var err error
	if job.Export, err = planExports(p); err != nil {
		return err
	}
	stop, kill, release := e.signals(ctx)
	defer release()
	res, err := run.Run(stop, kill, job)
	if res == nil || res.Report == nil || res.Report.Search == nil {
		return e.writeCI(nil, err)
	}
	if rerr := report.SearchTerminal(e.stdout, res.Report.Search); rerr != nil && err == nil {
		err = &runError{err: rerr, code: ExitFailed}
	}
	e.wrote(res.Dir, res.Written)
	return e.writeCI(res.Report, err)
}

// searchFiles writes the report files of a search's run and the search's
// own, search.md and search.json.
func searchFiles(dir string, r *view.Run) ([]string, error) {
	written, err := report.WriteFiles(dir, r)
	more, serr := report.WriteSearchFiles(dir, r.Search)
	return append(written, more...), errors.Join(err, serr)
}

// sweepFlagProblems are the problems of --sweep and --sweep-vus: a sweep
// of at least 2 steps, which chooses its own rates.
func sweepFlagProblems(f searchFlags) []string {
	var problems []string
	if f.sweep == 0 {
		if f.set["sweep-vus"] {
			problems = append(problems, "--sweep-vus applies to --sweep only")
		}
		return problems
	}
	if f.sweep < 2 {
		problems = append(problems, fmt.Sprintf("--sweep %d: want at least 2 steps (one request at a time, as fast as it goes, then the rates between)", f.sweep))
	}
	if f.set["sweep-vus"] && f.sweepVUs < 1 {
		problems = append(problems, fmt.Sprintf("--sweep-vus %d must be >= 1", f.sweepVUs))
	}
	for _, name := range []string{"start", "max", "step-factor", "bisect"} {
		if f.set[name] {
			problems = append(problems, fmt.Sprintf("--%s does not apply to --sweep, which chooses its rates from what the target achieved", name))
		}
	}
	return problems
}

// checkSearchPlan checks the plan for a capacity search or a sweep, and
// sets a sweep's VUs: --sweep-vus, else the workload's concurrency (closed)
// or vus.max (open).
func checkSearchPlan(cfg *searchConfig, f searchFlags) error {
	if f.sweep == 0 {
		return capacity.CheckSearchPlan(cfg.Plan, f.stepDuration)
	}
	if err := capacity.CheckSweepPlan(cfg.Plan, f.stepDuration); err != nil {
		return err
	}
	w := cfg.Plan.Profiles[0].Workloads[0]
	switch {
	case f.sweepVUs > 0:
		cfg.SweepVUs = f.sweepVUs
	case w.Model == plan.Closed:
		cfg.SweepVUs = w.Concurrency
	default:
		cfg.SweepVUs = w.VUs.Max
	}
	return nil
}

// opRate is an operation rate given on the command line, read as a
// plan's rate: is (plan.ParseRate), so that "100" is refused as there.
func opRate(flag, s string) (float64, error) {
	r, err := plan.ParseRate(flag, s)
	if err == nil && r.BytesPerSecond > 0 {
		err = fmt.Errorf("%s %q: want an operation rate like 100/s, not a byte rate", flag, s)
	}
	return r.PerSecond, err
}
