package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
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
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab run PLAN.yaml [--profile NAME[,NAME…]] [--repeat N] [--slo EXPR]… [--out DIR] [--json] [--workers N [--store URL]]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab run needs exactly one plan file, got %d arguments", len(pos))
	}
	if err := checkSLOFlags(slo); err != nil {
		return err
	}
	dist, err := e.localDist(fs, *workers, *storeURL, *runID, *profiles)
	if err != nil {
		return err
	}
	p, b, err := checkedPlan(fs, pos[0], *profiles, *repeat, filepath.Join(*out, "RUN_DIR"), true)
	if err != nil {
		return err
	}
	if err := checkSLOWorkloads(p, slo); err != nil {
		return err
	}
	return e.executePlan(ctx, p, b, *out, *jsonOut, recordedCommand(append([]string{"perflab", "run"}, args...)), slo, dist)
}

// executePlan creates the run directory and runs every cell, the plan's
// credentials scrubbed from all it stores and prints (perflab run and
// perflab k8s run alike); slo are the --slo gates, judged with the plan's
// own.
func (e *env) executePlan(ctx context.Context, p *plan.Plan, b plan.Builtins, out string, jsonOut bool, command string,
	slo []string, dist *distOptions) error {
	e.useScrubber(planScrubber(p))
	store, err := e.createPlanRun(out, p, &b, results.Meta{Name: p.Name, Command: command, Repeat: p.Repeat,
		Extra: withSLO(nil, gateSpecs(p, slo))})
	if err != nil {
		return err
	}
	defer store.Close()
	stop, kill, release := e.signals(ctx)
	defer release()
	sink, stop := e.newStoreSink(store, stop)
	cells := p.RunCells(p.Repeat)
	r := &planRun{e: e, p: p, store: store, b: b, matrix: len(cells) > 1, cells: len(cells), stop: stop, kill: kill,
		sink: sink, progress: report.NewProgress(e.stderr, e.tty)}
	var failed []string
	if dist != nil {
		if r.dist, err = e.startCoordinator(stop, p, store, *dist); err != nil {
			failed = append(failed, "the workers: "+oneLine(err.Error()))
			r.dist.broken = failed[0]
		}
		defer func() { r.dist.close(e, stop.Err() != nil, kill.Err() != nil) }()
	}
	for _, c := range cells {
		if stop.Err() != nil || r.dist != nil && r.dist.broken != "" {
			break
		}
		if state, msg := r.runCell(c); state == results.StateFailed {
			failed = append(failed, fmt.Sprintf("cell %s: %s", c.Name, oneLine(msg)))
		}
	}
	return e.finish(store, sink, jsonOut, func(rep *report.Run) (results.Status, error) {
		return judgePlan(rep, stop.Err() != nil, r.sink.err(), failed)
	})
}

// createPlanRun is createRun for a run of p: meta's extras get the plan
// (secrets masked) and its file, and b.RunDir the run directory, absolute
// because components run in the plan's directory, not perflab's.
func (e *env) createPlanRun(out string, p *plan.Plan, b *plan.Builtins, meta results.Meta) (*results.Run, error) {
	described, err := describedPlan(p)
	if err != nil {
		return nil, &runError{err: err, code: ExitFailed}
	}
	if meta.Extra == nil {
		meta.Extra = map[string]string{}
	}
	meta.Extra["plan"], meta.Extra["plan_file"] = described, p.File
	store, err := e.createRun(out, meta)
	if err != nil {
		return nil, err
	}
	if b.RunDir, err = filepath.Abs(store.Dir()); err != nil {
		store.Close()
		return nil, &runError{err: fmt.Errorf("cannot locate the run directory: %w", err), code: ExitFailed}
	}
	return store, nil
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
	p, err := loadPlan(path, profiles)
	if err != nil {
		return nil, plan.Builtins{}, err
	}
	if err := applyRepeat(fs, p, repeat); err != nil {
		return nil, plan.Builtins{}, err
	}
	b, err := builtins(runDir)
	if err != nil {
		return nil, b, &runError{err: err, code: ExitFailed}
	}
	problems := checkPlan(p, b)
	if here {
		problems = append(problems, commandProblems(p, b)...)
	}
	if len(problems) > 0 {
		return nil, b, invalidPlan(problems)
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

// judgePlan is judgeRun for a plan: a failed cell fails the run, after the
// store errors and an interrupt.
func judgePlan(r *report.Run, interrupted bool, storeErr error, failed []string) (results.Status, error) {
	if status, err := judgeLost(r); err != nil && storeErr == nil && !interrupted && len(failed) == 0 {
		return status, err
	}
	if storeErr != nil || interrupted || len(failed) == 0 {
		return judgeRun(r, interrupted, storeErr)
	}
	noun := "cell"
	if len(failed) > 1 {
		noun = "cells"
	}
	msg := fmt.Sprintf("%d %s failed: %s", len(failed), noun, strings.Join(failed, "; "))
	return results.Status{State: results.StateFailed, Ended: time.Now(), Message: msg, ExitCode: ExitFailed},
		&runError{err: errors.New(msg), code: ExitFailed,
			hint: "report.md says for each cell what failed; the components' output is under logs/ in the run directory"}
}

// oneLine joins a message's lines (such as a component's last log lines)
// into one.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

// planCmd is `perflab plan check PLAN.yaml`: validate a plan, drivers'
// params included, without starting anything.
func (e *env) planCmd(args []string) error {
	if len(args) == 0 || args[0] != "check" {
		return usageErrorf("perflab plan needs a subcommand: perflab plan check PLAN.yaml")
	}
	fs := newFlagSet("plan check", e)
	profiles := fs.String("profile", "", "check only these profiles, comma-separated")
	repeat := fs.Int("repeat", 0, "check a run of every cell `N` times (default: the plan's repeat)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab plan check needs exactly one plan file, got %d arguments", len(pos))
	}
	p, b, err := checkedPlan(fs, pos[0], *profiles, *repeat, "RUN_DIR", false)
	if err != nil {
		return err
	}
	for _, w := range commandProblems(p, b) {
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
		dims = append(dims, fmt.Sprintf("%s (%s)", v.Name, plural(len(v.Values), "value")))
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
}
