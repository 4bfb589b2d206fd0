package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/view"
)

// verifyFlags are the settings of perflab size --verify, as parsed.
type verifyFlags struct {
	size       string        // a size's name, or "all"
	duration   time.Duration // 0: the profile's own
	gomemlimit float64       // share of the memory limit as GOMEMLIMIT; 0 sets none
	tolerance  float64
	resources  []string // --search-limits: the resources to search, in order
	// k8s are the components that run in a cluster, resized there for a
	// confined run (--k8s), with the cluster's kubeconfig and context and
	// how long a rollout may take.
	k8s                     []k8sResize
	kubeconfig, kubeContext string
	rollout                 time.Duration
}

// aSize is one size of a run to verify: its cell and its rows.
type aSize struct {
	cell *view.Cell
	t    analysis.TShirt
	// scale, when set, scales the size's limits of one resource and
	// leaves the other unconfined (perflab size --search-limits).
	scale limitScale
}

// limitScale is a step of a limit search: the size's limits of resource
// (analysis.LimitCPU, LimitMemory) times factor; the zero value keeps the
// size as it is.
type limitScale struct {
	resource string
	factor   float64
}

// apply is t with its limits of the scale's resource scaled, and the
// other resource's dropped.
func (l limitScale) apply(t analysis.TShirt) analysis.TShirt {
	if l.factor == 0 {
		return t
	}
	times := func(q analysis.Quantity) analysis.Quantity {
		q.Amount = int64(float64(q.Amount)*l.factor + 0.5)
		return q
	}
	t.Components = slices.Clone(t.Components)
	for i, r := range t.Components {
		if l.resource == analysis.LimitMemory {
			r.MemoryLimit, r.CPULimit = times(r.MemoryLimit), analysis.Quantity{}
		} else {
			r.CPULimit, r.MemoryLimit = times(r.CPULimit), analysis.Quantity{}
		}
		t.Components[i] = r
	}
	return t
}

// text is the step's limits in words.
func (l limitScale) text() string {
	other := "memory"
	if l.resource == analysis.LimitMemory {
		other = "CPU"
	}
	return fmt.Sprintf("the size's %s limits × %.3g, %s unconfined", l.resource, l.factor, other)
}

// verify is perflab size RUN --verify: each size asked for is a claim
// that the system, held to the size's limits, serves its profile's load;
// it runs the profile again with every component perflab starts confined
// to them (sut.Limits) and judges the run (analysis.JudgeVerified). The
// verdicts are kept with the run, whose report files are written again
// with them; a size that does not hold exits 1.
func (e *env) verify(ctx context.Context, store *results.Run, r *view.Run, f verifyFlags) error {
	file, sizes, err := rerunnable(store, r, f.size)
	if err != nil {
		return err
	}
	var verdicts []analysis.Verified
	var failures []string
	for _, s := range sizes {
		if ctx.Err() != nil {
			break
		}
		v, _, err := e.verifyOne(ctx, store, r, file, s, f, "")
		if err != nil {
			failures = append(failures, fmt.Sprintf("size %s: %v", s.t.Size, err))
			continue
		}
		verdicts = append(verdicts, v)
	}
	if len(verdicts) > 0 {
		if err := readback.SaveVerified(store, verdicts); err != nil {
			return &runError{err: err, code: ExitFailed}
		}
		if err := rewriteReports(store); err != nil {
			return &runError{err: err, code: ExitFailed}
		}
	}
	writeVerdicts(e.stdout, verdicts)
	fmt.Fprintf(e.stderr, "verdicts: %s (the run's report files are written again with them)\n", store.Path(readback.VerifiedFile))
	return e.verifiedJUnit(store, r.Name, verifyOutcome(verdicts, failures))
}

// verifiedJUnit writes the JUnit file --junit names, if any: the run's
// checks, read again with the verdicts kept (a case "size verified: S"
// per size); outcome is the command's error, which a failure to write
// the file does not hide.
func (e *env) verifiedJUnit(store *results.Run, name string, outcome error) error {
	if e.ci.junit == "" {
		return outcome
	}
	e.ci.name = name
	r, err := readback.Load(store)
	if err != nil {
		return e.writeCI(nil, errors.Join(outcome, err))
	}
	return e.writeCI(r, outcome)
}

// rerunnable is what --verify and --search-limits run again: the run's
// plan (planToRerun) and its sizes called name (sizesToVerify).
func rerunnable(store *results.Run, r *view.Run, name string) (string, []aSize, error) {
	meta, err := store.Meta()
	if err != nil {
		return "", nil, &runError{err: err, code: ExitFailed}
	}
	file, err := planToRerun(meta, store)
	if err != nil {
		return "", nil, err
	}
	sizes, err := sizesToVerify(r, name)
	return file, sizes, err
}

// planToRerun is the plan file the run ran, or, when it is gone (perflab
// demo's own plan, a file moved since), the plan the run stored, written
// into the run's verify/ directory; secrets the stored plan masks are
// read from the environment again.
func planToRerun(meta results.Meta, store *results.Run) (string, error) {
	file, text := meta.Extra["plan_file"], meta.Extra["plan"]
	if text == "" {
		return "", usageErrorf("run %s ran no plan: only a plan's sizes (perflab run PLAN.yaml, perflab demo) can be verified", store.Dir())
	}
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	path := store.Path(filepath.Join(readback.VerifyDir, "plan.yaml"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", &runError{err: err, code: ExitFailed}
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", &runError{err: err, code: ExitFailed}
	}
	return path, nil
}

// sizesToVerify are the sizes of r named name ("all": every one), in the
// order of the cells.
func sizesToVerify(r *view.Run, name string) ([]aSize, error) {
	var out []aSize
	var names []string
	for _, c := range r.Cells {
		if c.Insights == nil {
			continue
		}
		for _, t := range c.Insights.Sizes {
			names = append(names, t.Size)
			if name == "all" || t.Size == name {
				out = append(out, aSize{cell: c, t: t})
			}
		}
	}
	if len(out) == 0 {
		if len(names) == 0 {
			return nil, usageErrorf("the run suggests no size to verify (nothing perflab started was sampled)")
		}
		return nil, usageErrorf("--size %s: the run's sizes are %s (or all)", name, strings.Join(names, ", "))
	}
	return out, nil
}

// verifyOne runs size s's profile again unconfined, unless baseline (a
// run directory of that) is given, then confined, and judges the
// confined run against the unconfined one; it returns the verdict and the
// baseline's directory, for the next step of a limit search.
func (e *env) verifyOne(ctx context.Context, store *results.Run, r *view.Run, file string, s aSize, f verifyFlags, baseline string) (analysis.Verified, string, error) {
	p, b, err := sizePlan(store, file, s, f)
	if err != nil {
		return analysis.Verified{}, baseline, err
	}
	sized := s.scale.apply(s.t)
	confine, notes := confinements(p, sized, f.gomemlimit, f.k8sComponents())
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "perflab: note: size %s: %s\n", s.t.Size, n)
	}
	if len(confine) == 0 && len(f.k8s) == 0 {
		return analysis.Verified{}, baseline, errors.New("no component perflab starts has a limit in this size (too few samples for a figure?), and --k8s names none in a cluster: nothing to hold to it")
	}
	what := limitsText(s.t)
	if s.scale.factor > 0 {
		what = s.scale.text()
	}
	if baseline == "" {
		fmt.Fprintf(e.stderr, "size %s of cell %s at %s: first unconfined, the baseline of this hour\n", s.t.Size, cellLabel(s.cell), s.t.Load)
		if baseline, err = e.rerun(ctx, store, p, b, s, "baseline", nil); err != nil {
			return analysis.Verified{}, "", err
		}
	}
	var rs *resized // the cluster's workloads resized, with --k8s
	if len(f.k8s) > 0 {
		var rolledOut bool
		var why string
		rs, rolledOut, why, err = e.resizeK8s(ctx, f, sized)
		defer func() {
			if err := rs.restore(e.stderr); err != nil {
				fmt.Fprintf(e.stderr, "perflab: error: cannot put the resources back: %v\n", err)
			}
		}()
		if err != nil {
			return analysis.Verified{}, baseline, err
		}
		if !rolledOut {
			return rs.notRolledOut(s.t, why), baseline, nil
		}
	}
	fmt.Fprintf(e.stderr, "size %s of cell %s at %s, confined: %s\n", s.t.Size, cellLabel(s.cell), s.t.Load, what)
	dir, err := e.rerun(ctx, store, p, b, s, "confined", confine)
	if err != nil {
		return analysis.Verified{}, baseline, err
	}
	var extra []analysis.Confined
	if rs != nil {
		if extra, err = rs.evidence(ctx); err != nil {
			return analysis.Verified{}, baseline, err
		}
	}
	return judge(r, s, f, baseline, dir, extra)
}

// judge judges the confined run in dir against the baseline run, with
// extra the evidence of components confined elsewhere (in a cluster).
func judge(r *view.Run, s aSize, f verifyFlags, baseline, dir string, extra []analysis.Confined) (analysis.Verified, string, error) {
	base, err := results.OpenReadOnly(baseline)
	if err != nil {
		return analysis.Verified{}, baseline, err
	}
	defer base.Close()
	confined, err := results.OpenReadOnly(dir)
	if err != nil {
		return analysis.Verified{}, baseline, err
	}
	defer confined.Close()
	v, err := readback.JudgeConfined(r, s.cell.Index, s.t.Size, base, confined, f.tolerance, extra)
	return v, baseline, err
}

// k8sComponents are the components --k8s resizes in a cluster.
func (f verifyFlags) k8sComponents() map[string]bool {
	out := map[string]bool{}
	for _, m := range f.k8s {
		out[m.component] = true
	}
	return out
}

// sizePlan is the run's plan again, narrowed to size s's cell and
// profile, its load as long as --verify-duration says, checked.
func sizePlan(store *results.Run, file string, s aSize, f verifyFlags) (*plan.Plan, plan.Builtins, error) {
	p, err := run.LoadPlan(file, s.t.Size)
	var b plan.Builtins
	if err == nil {
		b, err = run.Builtins(filepath.Join(store.Path(readback.VerifyDir), "RUN_DIR"))
	}
	if err != nil {
		return nil, b, fmt.Errorf("cannot load the run's plan %s again: %w", file, err)
	}
	oneCell(p, s.cell)
	if f.duration > 0 {
		p.Profiles[0].Duration = f.duration
	}
	if problems := append(run.Check(p, b), run.CommandProblems(p, b)...); len(problems) > 0 {
		return nil, b, run.InvalidPlan(problems)
	}
	return p, b, nil
}

// rerun runs p (one cell, one profile) into the run's verify/ directory,
// its components held to confine (none: unconfined), and names its
// directory.
func (e *env) rerun(ctx context.Context, store *results.Run, p *plan.Plan, b plan.Builtins, s aSize, kind string, confine map[string]run.Confinement) (string, error) {
	job := e.job(store.Path(readback.VerifyDir), results.Meta{Name: fmt.Sprintf("%s %s %s", p.Name, kind, s.t.Size),
		Command: recordedCommand([]string{"perflab", "size", store.Dir(), "--verify", "--size", s.t.Size})})
	job.Plan, job.Builtins, job.SampleEvery, job.Confine = p, b, p.SampleInterval, confine
	stop, kill, release := e.signals(ctx)
	res, err := run.Run(stop, kill, job)
	release()
	if res == nil || res.Dir == "" {
		return "", fmt.Errorf("the %s run did not start: %w", kind, err)
	}
	if confine == nil && err != nil {
		return "", fmt.Errorf("the unconfined run failed, so no size can be judged against it: %w", err)
	}
	return res.Dir, nil
}

// oneCell narrows p's matrix to cell c: each variable to c's value.
func oneCell(p *plan.Plan, c *view.Cell) {
	for i := range p.Matrix {
		for _, v := range c.Vars {
			if v.Name == p.Matrix[i].Name {
				p.Matrix[i].Values = []string{v.Value}
			}
		}
	}
	p.Repeat, p.Compare, p.Export = 1, nil, nil
}

// confinements are the limits of size t for each component of p that
// perflab starts, with GOMEMLIMIT at share of a memory limit when share
// is set; notes say which components cannot be confined, and why.
func confinements(p *plan.Plan, t analysis.TShirt, share float64, inCluster map[string]bool) (map[string]run.Confinement, []string) {
	out := map[string]run.Confinement{}
	var notes []string
	started := map[string]bool{}
	for _, c := range p.Components {
		started[c.Name] = c.Run != nil
	}
	for _, row := range t.Components {
		if inCluster[row.Component] {
			continue // resized in its cluster
		}
		if !started[row.Component] {
			notes = append(notes, fmt.Sprintf("component %s is not confined: perflab does not start it (attached, or read from Prometheus)", row.Component))
			continue
		}
		var c run.Confinement
		if !row.NoCPULimit && !row.CPULimit.IsZero() {
			c.Limits.CPU = row.CPULimit.Value()
		}
		if !row.MemoryLimit.IsZero() {
			c.Limits.Memory = row.MemoryLimit.Amount
			if share > 0 {
				c.Env = append(c.Env, fmt.Sprintf("GOMEMLIMIT=%dMiB", int64(share*float64(row.MemoryLimit.Amount))>>20))
			}
		}
		if c.Limits.IsZero() {
			notes = append(notes, fmt.Sprintf("component %s has no limit in the size: it runs unconfined", row.Component))
			continue
		}
		out[row.Component] = c
	}
	return out, notes
}

// limitsText is a size's limits in words: "api 750m CPU, 384Mi; db …".
func limitsText(t analysis.TShirt) string {
	var parts []string
	for _, r := range t.Components {
		var l []string
		if !r.NoCPULimit && !r.CPULimit.IsZero() {
			l = append(l, r.CPULimit.String()+" CPU")
		}
		if !r.MemoryLimit.IsZero() {
			l = append(l, r.MemoryLimit.String())
		}
		if len(l) > 0 {
			parts = append(parts, r.Component+" "+strings.Join(l, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

func cellLabel(c *view.Cell) string {
	if c.Name == "" {
		return plan.DefaultCell
	}
	return c.Name
}

// rewriteReports writes the run's report files again, with its verdicts.
func rewriteReports(store *results.Run) error {
	r, err := readback.Load(store)
	if err != nil {
		return err
	}
	_, err = report.WriteFiles(store.Dir(), r)
	return err
}

// writeVerdicts is the terminal's table of verdicts: a line per size,
// then its reasons or evidence.
func writeVerdicts(w io.Writer, vs []analysis.Verified) {
	if len(vs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIZE\tLOAD\tVERDICT\tLATENCY CONFINED")
	for _, v := range vs {
		verdict := v.Verdict()
		if !v.Holds {
			verdict = strings.ToUpper(verdict)
		}
		var latency []string
		for _, l := range v.Latency {
			latency = append(latency, l.Text())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Size, v.Load, verdict, strings.Join(latency, ", "))
	}
	tw.Flush()
	for _, v := range vs {
		for _, why := range v.Reasons {
			fmt.Fprintf(w, "  %s: %s\n", v.Size, why)
		}
		for _, why := range v.Warnings {
			fmt.Fprintf(w, "  %s: warning: %s\n", v.Size, why)
		}
		for _, c := range v.Components {
			fmt.Fprintf(w, "  %s: %s: %s\n", v.Size, c.Component, c.Evidence())
		}
	}
}

// verifyOutcome is the command's error: none when every size asked for
// was verified and holds.
func verifyOutcome(vs []analysis.Verified, failures []string) error {
	var broken, unverified []string
	for _, v := range vs {
		switch {
		case v.Inconclusive:
			unverified = append(unverified, v.Size)
		case !v.Holds:
			broken = append(broken, v.Size)
		}
	}
	switch {
	case len(failures) > 0:
		return &runError{err: errors.New("cannot verify: " + strings.Join(failures, "; ")), code: ExitFailed}
	case len(unverified) > 0 && len(broken) == 0:
		return &runError{err: fmt.Errorf("size %s could not be verified: the run fell short while no limit bound", strings.Join(unverified, ", ")), code: ExitFailed,
			hint: "the machine was too busy to tell (see the warnings above); run perflab size --verify again on a quiet machine"}
	case len(broken) > 0:
		return &runError{err: fmt.Errorf("size %s does not hold inside its limits", strings.Join(broken, ", ")), code: ExitFailed,
			hint: "the reasons are above and in the report's Verified section; a size with more CPU or memory, or perflab size --strategy with more headroom"}
	}
	return nil
}
