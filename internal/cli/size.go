package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// sizeFlags are the settings of `perflab size`, as typed.
type sizeFlags struct {
	strategy, headroom, limitFactor, at string
	basis                               string
	verify, searchLimits                bool
	size, gomemlimit, tolerance         string
	resource                            string
	verifyDuration                      time.Duration
	k8s                                 resizeFlags
}

// size is `perflab size RUN_DIR [--strategy p99|vpa|krr] [--headroom 25%]
// [--limit-factor 1.5] [--at LOAD] [--verify [--size NAME|all] …]`: the
// suggested sizes of a finished run again, with other settings, what its
// scaling fits predict at a load, or each size verified by running its
// load again inside its limits.
func (e *env) size(ctx context.Context, args []string) error {
	fs := newFlagSet("size", e)
	var f sizeFlags
	fs.StringVar(&f.strategy, "strategy", analysis.DefaultStrategy, "sizing strategy: "+strings.Join(analysis.StrategyNames(), ", "))
	fs.StringVar(&f.headroom, "headroom", "25%", "p99 strategy: requests = P99 × (1 + headroom), e.g. 25% or 0.25")
	fs.StringVar(&f.limitFactor, "limit-factor", "1.5", "p99 and vpa strategies: limits = requests × factor")
	fs.StringVar(&f.basis, "basis", analysis.BasisP99, "p99 strategy: the figure requests rest on: p99, p95 or mean+3sd (a P99 of fewer than 100 samples is their maximum)")
	fs.StringVar(&f.at, "at", "", "predict resources at this load from the scaling fits: a rate (5000/s) or a byte rate moved, sent and received (10MB/s)")
	fs.BoolVar(&f.verify, "verify", false, "run each size's profile again with every component perflab starts held to the size's limits (CFS quota, memory limit; needs root), and judge whether it holds")
	fs.BoolVar(&f.searchLimits, "search-limits", false, "run each size's profile inside its CPU limits, then its memory limits, scaled down (or up) by bisection, 7 runs each at most: the limit-response curves, their knees and the smallest limits that hold (needs root)")
	fs.StringVar(&f.resource, "resource", "both", "with --search-limits: the limits to search, cpu, memory or both")
	fs.StringVar(&f.size, "size", "all", "with --verify or --search-limits: the size to verify, or all")
	fs.DurationVar(&f.verifyDuration, "verify-duration", 0, "with --verify: how long each confined run's load lasts (default: the profile's own)")
	fs.StringVar(&f.gomemlimit, "verify-gomemlimit", "", "with --verify: set GOMEMLIMIT of the confined components to this share of their memory limit, e.g. 90%")
	fs.StringVar(&f.tolerance, "tolerance", "20%", "with --verify and no SLO gates in the plan: how much slower than unconfined the latency p50 and p99 may be")
	fs.Var(&f.k8s.resize, "k8s", "with --verify or --search-limits: COMPONENT=[NAMESPACE/]deployment/NAME[:CONTAINER] (or statefulset): the component runs in a cluster, and the confined run applies the size's requests and limits to that container (server-side apply, then back); repeatable")
	fs.StringVar(&f.k8s.kubeconfig, "kubeconfig", "", "with --k8s: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&f.k8s.context, "context", "", "with --k8s: the kubeconfig context (default: its current one)")
	fs.DurationVar(&f.k8s.rollout, "rollout-timeout", 5*time.Minute, "with --k8s: how long a rollout of the size's resources (and of the resources put back) may take")
	fs.StringVar(&e.ci.junit, "junit", "", "with --verify: also write the run's checks, each size's verdict among them, as JUnit XML to `FILE`, for CI")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab size RUN_DIR [--strategy p99|vpa|krr] [--headroom 25%] [--limit-factor 1.5] [--basis p99|p95|mean+3sd] [--at LOAD]")
		fmt.Fprintln(fs.Output(), "       perflab size RUN_DIR --verify [--size NAME|all] [--verify-duration D] [--verify-gomemlimit 90%] [--tolerance 20%] [--junit FILE]")
		fmt.Fprintln(fs.Output(), "       perflab size RUN_DIR --search-limits [--resource cpu|memory|both] [--size NAME|all] [--verify-duration D] [--verify-gomemlimit 90%] [--tolerance 20%]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	o, load, problems := f.parse()
	vf, vproblems := f.parseVerify(fs)
	problems = append(problems, vproblems...)
	if len(pos) != 1 {
		problems = append(problems, fmt.Sprintf("perflab size needs one run directory, got %d arguments", len(pos)))
	}
	if len(problems) > 0 {
		return usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	if o.Strategy.Name == "krr" && (set(fs, "headroom") || set(fs, "limit-factor")) {
		fmt.Fprintln(e.stderr, "perflab: note: strategy krr uses neither --headroom nor --limit-factor")
	}
	if o.Strategy.Name == "vpa" && set(fs, "headroom") {
		fmt.Fprintln(e.stderr, "perflab: note: strategy vpa uses its own margin of 15 %, not --headroom")
	}
	store, err := openRun(pos[0], "the directory")
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := readback.Load(store)
	if err == nil {
		err = readback.Reinsight(store, r, o)
	}
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if f.searchLimits {
		return e.searchLimits(ctx, store, r, vf)
	}
	if f.verify {
		return e.verify(ctx, store, r, vf)
	}
	if f.at == "" {
		return report.SizesMarkdown(e.stdout, r)
	}
	return e.predict(r, load)
}

// parse checks every flag and reports every problem at once.
func (f sizeFlags) parse() (analysis.InsightOptions, loadArg, []string) {
	var problems []string
	o := analysis.DefaultInsightOptions()
	s, err := analysis.ParseStrategy(f.strategy)
	if err != nil {
		problems = append(problems, "--strategy: "+err.Error())
	}
	o.Strategy = s
	o.Sizing.Basis = f.basis
	if o.Sizing.Headroom, err = parseHeadroom(f.headroom); err != nil {
		problems = append(problems, "--headroom: "+err.Error())
	}
	if o.Sizing.LimitFactor, err = strconv.ParseFloat(strings.TrimSpace(f.limitFactor), 64); err != nil {
		problems = append(problems, fmt.Sprintf("--limit-factor %q: want a number like 1.5", f.limitFactor))
	}
	if err == nil {
		for _, e := range o.Sizing.Validate() {
			problems = append(problems, e.Error())
		}
	}
	var load loadArg
	if f.at != "" {
		if load.basis, load.value, err = parseLoad(f.at); err != nil {
			problems = append(problems, "--at: "+err.Error())
		}
	}
	return o, load, problems
}

// parseVerify checks the flags of --verify, and that none is given
// without it.
func (f sizeFlags) parseVerify(fs *flag.FlagSet) (verifyFlags, []string) {
	var problems []string
	v := verifyFlags{size: f.size, duration: f.verifyDuration}
	if f.verify && f.searchLimits {
		problems = append(problems, "--verify and --search-limits: give one")
	}
	if !f.verify && !f.searchLimits {
		for _, name := range []string{"size", "verify-duration", "verify-gomemlimit", "tolerance", "resource", "junit", "k8s", "kubeconfig", "context", "rollout-timeout"} {
			if set(fs, name) {
				problems = append(problems, "--"+name+" applies to --verify and --search-limits")
			}
		}
		return v, problems
	}
	switch f.resource {
	case "both":
		v.resources = []string{analysis.LimitCPU, analysis.LimitMemory}
	case analysis.LimitCPU, analysis.LimitMemory:
		v.resources = []string{f.resource}
	default:
		problems = append(problems, fmt.Sprintf("--resource %q: want cpu, memory or both", f.resource))
	}
	if f.verify && set(fs, "resource") {
		problems = append(problems, "--resource applies to --search-limits")
	}
	if f.at != "" {
		problems = append(problems, "--at and --verify: give one")
	}
	var kp []string
	v.k8s, kp = f.k8s.parse()
	problems = append(problems, kp...)
	v.kubeconfig, v.kubeContext, v.rollout = f.k8s.kubeconfig, f.k8s.context, f.k8s.rollout
	if f.verifyDuration < 0 {
		problems = append(problems, fmt.Sprintf("--verify-duration %v: want a positive duration", f.verifyDuration))
	}
	var err error
	if f.gomemlimit != "" {
		if v.gomemlimit, err = parseHeadroom(f.gomemlimit); err != nil || v.gomemlimit <= 0 || v.gomemlimit > 1 {
			problems = append(problems, fmt.Sprintf("--verify-gomemlimit %q: want a share of the memory limit like 90%%", f.gomemlimit))
		}
	}
	if v.tolerance, err = parseHeadroom(f.tolerance); err != nil || v.tolerance < 0 {
		problems = append(problems, fmt.Sprintf("--tolerance %q: want a percentage like 20%%", f.tolerance))
	}
	return v, problems
}

// loadArg is the load of --at, in the unit it was given in.
type loadArg struct {
	basis analysis.LoadBasis
	value float64
}

// parseHeadroom reads "25%", "25 %" or "0.25" as 0.25.
func parseHeadroom(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct, isPct := strings.CutSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want a percentage like 25%% or a fraction like 0.25", s)
	}
	if isPct {
		v /= 100
	}
	return v, nil
}

// parseLoad reads a load as an operation rate ("5000/s", "300/m", "250")
// or a byte rate ("10MB/s").
func parseLoad(s string) (analysis.LoadBasis, float64, error) {
	num, _, _ := strings.Cut(strings.TrimSpace(s), "/")
	if _, err := strconv.ParseFloat(strings.TrimSpace(num), 64); err == nil {
		v, err := units.ParseRate(s)
		if err == nil && v <= 0 {
			err = fmt.Errorf("rate %q: want more than 0", s)
		}
		return analysis.LoadRequests, v, err
	}
	v, err := units.ParseByteRate(s)
	if err == nil && v <= 0 {
		err = fmt.Errorf("byte rate %q: want more than 0", s)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%q: want a rate like 5000/s or a byte rate like 10MB/s", s)
	}
	return analysis.LoadBytes, v, nil
}

// set reports whether the flag was given on the command line.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// predict writes, for every cell with scaling fits, what they predict at
// the load of --at. The fits keep the unit the report chose (requests/s,
// or bytes/s when the requests differ in size): a byte rate is converted
// to requests/s, and the output says so; a load that can't be converted
// is refused, naming the unit to give, before anything is written. A run
// without any fits fails with a hint.
func (e *env) predict(r *view.Run, at loadArg) error {
	type prediction struct {
		cell       *view.Cell
		load       float64
		conversion string
	}
	var preds []prediction
	var problems []string
	cells := r.InsightCells()
	for _, c := range cells {
		if c.Insights == nil || c.Insights.Scaling == nil {
			continue
		}
		load, note, err := c.Insights.LoadIn(at.basis, at.value)
		if err != nil {
			problems = append(problems, cellPrefix(c, len(cells))+err.Error())
			continue
		}
		preds = append(preds, prediction{c, load, note})
	}
	if len(problems) > 0 {
		return &runError{err: errors.New(strings.Join(problems, "\n")), code: ExitUsage}
	}
	if len(preds) == 0 {
		why := ""
		if left := leftOut(cells); len(left) > 0 {
			why = ": " + strings.Join(left, "; ")
		}
		return &runError{err: fmt.Errorf("cannot predict at %s: no cell of the run has scaling fits%s", report.LoadValueText(at.value, at.basis), why),
			hint: "a fit needs two or more profiles that ran the same workload, whose load the system held on a machine it did not fill (three for a verdict and a prediction interval)", code: ExitFailed}
	}
	for _, p := range preds {
		if err := report.PredictionMarkdown(e.stdout, p.cell, p.load, p.cell.Insights.PredictAt(p.load), p.conversion); err != nil {
			return err
		}
	}
	return nil
}

// leftOut is why the cells' profiles were left out of their fits: the
// system did not hold their load, or the machine set their figures.
func leftOut(cells []*view.Cell) []string {
	var out []string
	for _, c := range cells {
		if c.Insights == nil {
			continue
		}
		for _, t := range c.Insights.Sizes {
			if t.Held.Fits() {
				continue
			}
			why := strings.Join(slices.DeleteFunc([]string{t.Held.Why(), t.Held.MachineBound, t.Held.MachineBusy}, func(s string) bool { return s == "" }), "; ")
			out = append(out, cellPrefix(c, len(cells))+t.Held.LeftOutText(t.Size)+" ("+why+")")
		}
	}
	return out
}

// cellPrefix names the cell a problem is of when the run has several.
func cellPrefix(c *view.Cell, cells int) string {
	if cells < 2 {
		return ""
	}
	if c.Name != "" {
		return "cell " + c.Name + ": "
	}
	return fmt.Sprintf("cell %d: ", c.Index)
}
