package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/view"
)

// runPlan is `perflab run PLAN.yaml [--profile NAME,…] [--repeat N] [--out
// DIR]`: every cell of the plan's matrix in turn, every selected profile in
// each; with repetitions every cell N times, interleaved.
func (e *env) runPlan(ctx context.Context, args []string) error {
	fs := newFlagSet("run", e)
	profiles := fs.String("profile", "", "run only these profiles, comma-separated, in this order (default: all)")
	repeat := fs.Int("repeat", 0, "run every cell `N` times, interleaved: repetition 1 of every cell, then 2, … (default: the plan's repeat, else 1)")
	out := fs.String("out", "perflab-runs", "parent directory for the run directory")
	jsonOut := fs.Bool("json", false, "print the JSON summary to stdout instead of the tables")
	workers := fs.Int("workers", 0, "make the load with `N` worker processes on this machine, merged into one run (docs: Distributed runs)")
	storeURL := fs.String("store", "", "with --workers: the workers' shared store, s3://BUCKET/PREFIX?endpoint=URL or a directory (default: a temporary directory)")
	runID := fs.String("run-id", "", "with --workers and --store: start no worker, coordinate the N started elsewhere for run `ID` (kubectl apply of perflab k8s manifest)")
	var slo listFlag
	fs.Var(&slo, "slo", sloUsage+"; added to the plan's own slo")
	var exports exportFlags
	exports.register(fs)
	e.ci.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab run PLAN.yaml [--profile NAME[,NAME…]] [--repeat N] [--slo EXPR]… [--out DIR | --run-dir DIR] [--json] [--junit FILE] [--csv FILE] [--workers N [--store URL]] [--export KIND=URL]…")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab run needs exactly one plan file, got %d arguments", len(pos))
	}
	if err := checkSLOFlags(slo); err != nil {
		return err
	}
	if err := e.ci.check(set(fs, "out")); err != nil {
		return err
	}
	if _, err := exports.build(); err != nil {
		return err
	}
	e.export = &exports
	opts, err := e.localDist(fs, *workers, *storeURL, *runID, *profiles)
	if err != nil {
		return err
	}
	p, b, err := checkedPlan(fs, pos[0], *profiles, *repeat, filepath.Join(*out, "RUN_DIR"), true)
	if err != nil {
		return err
	}
	if err := run.CheckSLOWorkloads(p, slo); err != nil {
		return err
	}
	if *runID == "" { // the workers are this machine's processes, or this process
		if problems := run.OpenFileProblems(p, *workers); len(problems) > 0 {
			return run.InvalidPlan(problems)
		}
	}
	var load run.Load
	if opts != nil {
		load = fleet.New(*opts)
	}
	return e.executePlan(ctx, p, b, *out, *jsonOut, recordedCommand(append([]string{"perflab", "run"}, args...)), slo, load)
}

// executePlan runs p (perflab run, k8s run and demo alike), the plan's
// credentials scrubbed from all it stores and prints; slo are the --slo
// gates, judged with the plan's own; load, when set, makes the load (the
// workers of a distributed run).
func (e *env) executePlan(ctx context.Context, p *plan.Plan, b plan.Builtins, out string, jsonOut bool, command string,
	slo []string, load run.Load) error {
	targets, err := e.exportTargets(p)
	if err != nil {
		return err
	}
	e.ci = e.ci.withPlan(p)
	e.ci.name = p.Name
	job := e.job(out, results.Meta{Name: p.Name, Command: command, Repeat: p.Repeat,
		Extra: readback.WithSLO(nil, run.GateSpecs(p, slo))})
	job.Plan, job.Builtins, job.SampleEvery, job.Load, job.Export = p, b, p.SampleInterval, load, targets
	return e.runJob(ctx, job, jsonOut)
}

// job is a run job writing under out with meta, its events shown on the
// terminal, scrubbed as e is.
func (e *env) job(out string, meta results.Meta) run.Job {
	return run.Job{Out: out, Dir: e.ci.runDir, Meta: meta, Events: e.events(), Files: report.WriteFiles, Intervals: e.intervals, Scrub: e.scrubFunc()}
}

// scrubFunc is e's scrubber as a function; nil when it has none.
func (e *env) scrubFunc() func(string) string {
	if e.scrub == nil {
		return nil
	}
	return e.scrub.String
}

// runJob runs job until it ends or a signal stops it, and shows its
// report.
func (e *env) runJob(ctx context.Context, job run.Job, jsonOut bool) error {
	stop, kill, release := e.signals(ctx)
	defer release()
	res, err := run.Run(stop, kill, job)
	return e.show(res, jsonOut, err)
}

// show prints a finished run's report (as JSON with jsonOut) and where its
// files are, and returns err, the run's failure, if any.
func (e *env) show(res *run.Result, jsonOut bool, err error) error {
	if res == nil || res.Report == nil {
		return e.writeCI(nil, err)
	}
	render := report.Terminal
	if jsonOut {
		render = report.JSON
	}
	if rerr := render(e.stdout, res.Report); rerr != nil && err == nil {
		err = &runError{err: rerr, code: ExitFailed}
	}
	e.wrote(res.Dir, res.Written)
	return e.writeCI(res.Report, err)
}

// writeCI writes the files for CI of r, a run that ended with err (nil
// when it never had a report), says where they are, and returns err, or
// the failure to write them when the run had none.
func (e *env) writeCI(r *view.Run, err error) error {
	werr := e.ci.write(r, e.ci.name, err)
	if werr == nil {
		for _, f := range e.ci.files() {
			if !e.quiet && (r != nil || f[0] == "junit" && err != nil) {
				fmt.Fprintf(e.stderr, "%-14s %s\n", f[0]+":", f[1])
			}
		}
		return err
	}
	if err == nil {
		return werr
	}
	fmt.Fprintf(e.stderr, "perflab: also: %v\n", werr)
	return err
}

// wrote says where a run's directory is and which of its report files
// were written: only those (a full disk may have cost some).
func (e *env) wrote(dir string, written []string) {
	if e.quiet {
		return
	}
	fmt.Fprintf(e.stderr, "run directory: %s\n", dir)
	e.reportFiles(dir, written)
}

// reportFiles says where the report files written are: the search's
// report, the run's (and its page) and, but for a search, its summary.
func (e *env) reportFiles(dir string, written []string) {
	has := func(name string) bool { return slices.Contains(written, name) }
	path := func(name string) string { return filepath.Join(dir, name) }
	md, page, summary := formatNamed("md"), formatNamed("html").File, formatNamed("json").File
	if has(md.SearchFile) {
		fmt.Fprintf(e.stderr, "search:        %s\n", path(md.SearchFile))
	}
	switch {
	case has(md.File) && has(page):
		fmt.Fprintf(e.stderr, "report:        %s (and %s)\n", path(md.File), page)
	case has(md.File):
		fmt.Fprintf(e.stderr, "report:        %s\n", path(md.File))
	case has(page):
		fmt.Fprintf(e.stderr, "report:        %s\n", path(page))
	}
	if has(summary) && !has(md.SearchFile) {
		fmt.Fprintf(e.stderr, "summary:       %s\n", path(summary))
	}
}

// formatNamed is report's format called name, which there is.
func formatNamed(name string) report.Format {
	f, _ := report.FormatNamed(name)
	return f
}

// checkedPlan loads the plan at path for perflab run, plan check and
// k8s: only the profiles --profile names (all when empty), repeated as
// --repeat says when given, and checked with the builtins of runDir, the
// run directory as the plan's checks see it. Every problem is listed;
// nothing is started.
func checkedPlan(fs *flag.FlagSet, path, profiles string, repeat int, runDir string, here bool) (*plan.Plan, plan.Builtins, error) {
	if err := checkRepeat(fs, repeat); err != nil {
		return nil, plan.Builtins{}, err
	}
	p, err := run.LoadPlan(path, profiles)
	if err != nil {
		return nil, plan.Builtins{}, err
	}
	if err := applyRepeat(fs, p, repeat); err != nil {
		return nil, plan.Builtins{}, err
	}
	b, err := run.Builtins(runDir)
	if err != nil {
		return nil, b, &runError{err: err, code: ExitFailed}
	}
	problems := run.Check(p, b)
	if here {
		problems = append(problems, run.CommandProblems(p, b)...)
	}
	if len(problems) > 0 {
		return nil, b, run.InvalidPlan(problems)
	}
	return p, b, nil
}

// checkRepeat refuses a --repeat out of range before anything is read or
// started.
func checkRepeat(fs *flag.FlagSet, n int) error {
	if set(fs, "repeat") && (n < 1 || n > plan.MaxRepeat) {
		return usageErrorf("--repeat %d: want 1 (every cell once) to %d", n, plan.MaxRepeat)
	}
	return nil
}

// applyRepeat sets the plan's repetitions from --repeat, when given.
func applyRepeat(fs *flag.FlagSet, p *plan.Plan, n int) error {
	if !set(fs, "repeat") {
		return nil
	}
	p.Repeat = n
	if p.RunCells(n) == nil {
		return usageErrorf("--repeat %d: %d cells × %d is more than %d cells; split the plan", n, len(p.Cells()), n, plan.MaxCells)
	}
	return nil
}

// planCmd is `perflab plan check PLAN.yaml`: validate a plan, drivers'
// params included, without starting anything.
func (e *env) planCmd(args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		return e.groupHelp("plan", "check")
	}
	if len(args) == 0 || args[0] != "check" {
		return usageErrorf("perflab plan needs a subcommand: perflab plan check PLAN.yaml")
	}
	fs := newFlagSet("plan check", e)
	profiles := fs.String("profile", "", "check only these profiles, comma-separated")
	repeat := fs.Int("repeat", 0, "check a run of every cell `N` times (default: the plan's repeat)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab plan check needs exactly one plan file, got %d arguments", len(pos))
	}
	p, b, err := checkedPlan(fs, pos[0], *profiles, *repeat, "RUN_DIR", false)
	if err != nil {
		return err
	}
	for _, w := range run.CommandProblems(p, b) {
		fmt.Fprintf(e.stderr, "perflab: warning: %v (perflab run refuses the plan on this machine)\n", w)
	}
	describePlan(e, p)
	return nil
}

// describePlan prints what a run of p would do.
func describePlan(e *env, p *plan.Plan) {
	cells := p.RunCells(p.Repeat)
	fmt.Fprintf(e.stdout, "%s: valid plan %q\n", p.File, p.Name)
	var comps []string
	for _, c := range p.Components {
		how := "attached"
		switch {
		case c.Run != nil:
			how = "started"
		case c.Observe == plan.ObservePrometheus:
			how = "read from Prometheus"
		}
		comps = append(comps, c.Name+" ("+how+")")
	}
	if len(comps) == 0 {
		comps = []string{"none"}
	}
	fmt.Fprintf(e.stdout, "  components: %s\n", strings.Join(comps, ", "))
	var dims []string
	for _, v := range p.Matrix {
		dims = append(dims, fmt.Sprintf("%s (%s)", v.Name, run.Plural(len(v.Values), "value")))
	}
	if len(dims) == 0 {
		dims = []string{"no matrix"}
	}
	if p.Repeat > 1 {
		dims = append(dims, fmt.Sprintf("%d repetitions, interleaved", p.Repeat))
	}
	fmt.Fprintf(e.stdout, "  cells: %d: %s\n", len(cells), strings.Join(dims, " × "))
	var total time.Duration
	for _, pr := range p.Profiles {
		names := make([]string, len(pr.Workloads))
		for i, w := range pr.Workloads {
			names[i] = w.Name + " (" + w.Driver + ")"
		}
		fmt.Fprintf(e.stdout, "  profile %s: %v, workloads %s\n", pr.Name, pr.Duration, strings.Join(names, ", "))
		total += pr.Duration
	}
	fmt.Fprintf(e.stdout, "  load time: %v per cell, %v in all, sampled every %v\n", total, total*time.Duration(len(cells)), p.SampleInterval)
	for _, x := range p.Export {
		fmt.Fprintf(e.stdout, "  export: %s to %s\n", x.Kind, secret.URL(x.URL))
	}
}
