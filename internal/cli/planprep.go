package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/target"
)

// phasePlan is one profile of one cell, decoded and ready to run.
type phasePlan struct {
	profile   plan.Profile
	workloads []phaseWorkload
}

// phaseWorkload is one workload of a phase: its driver, not built yet, and
// its schedule and description; eng.Driver is set when the phase starts.
// The workload as planned and its profile's duration are kept for a
// schedule that needs the built driver (settleRate).
type phaseWorkload struct {
	spec     driverSpec
	eng      engine.Workload
	desc     results.Workload
	plan     plan.Workload
	length   time.Duration
	resolved shard.Resolved // what settleRate decided, for the workers of a distributed run
}

// loadPlan reads the plan at path and keeps the profiles list names
// (all when empty). Its errors are usage errors: nothing was started.
func loadPlan(path, profiles string) (*plan.Plan, error) {
	p, err := plan.LoadPartial(path)
	if err != nil {
		var pe plan.Errors
		if !errors.As(err, &pe) {
			return nil, &runError{err: err, hint: "give the path of a plan file (docs/format/plan.md)", code: ExitUsage}
		}
		problems := planErrors(err)
		if p != nil {
			problems = append(problems, paramProblems(p)...)
		}
		return nil, invalidPlan(sortedProblems(problems))
	}
	if p, err = p.Select(profiles); err != nil {
		return nil, usageErrorf("--profile: %v", err)
	}
	return p, nil
}

// paramProblems decodes the params of the workloads of a plan that has
// other problems, so that they are reported too. The plan is not expanded:
// problems with values still holding a {{variable}} are left for the check
// of the expanded plan.
func paramProblems(p *plan.Plan) []error {
	var out []error
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			factory, err := driverOf(p, w)
			if err != nil && w.Driver != "" { // a missing driver is the plan's problem, reported already
				out = append(out, err)
			}
			if err != nil || w.Params.IsZero() {
				continue
			}
			_, errs := factory(driverInput{params: w.Params, file: p.File, dir: p.Dir})
			for _, err := range errs {
				if !strings.Contains(err.Error(), "{{") {
					out = append(out, err)
				}
			}
		}
	}
	return out
}

// sortedProblems orders problems by position in the plan file and drops
// repeats.
func sortedProblems(errs []error) []error {
	sort.SliceStable(errs, func(i, j int) bool { return posOf(errs[i]).less(posOf(errs[j])) })
	var out []error
	seen := map[string]bool{}
	for _, err := range errs {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, err)
		}
	}
	return out
}

// invalidPlan is the error for a plan with problems: every one on its own
// line, exit status 2.
func invalidPlan(problems []error) error {
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.Error()
	}
	noun := "problems"
	if len(lines) == 1 {
		noun = "problem"
	}
	return &runError{err: fmt.Errorf("invalid plan (%d %s):\n%s", len(lines), noun, strings.Join(lines, "\n")),
		hint: "fix every line above; `perflab plan check PLAN` checks a plan without running it", code: ExitUsage}
}

// checkPlan expands every cell of p and decodes what the plan format leaves
// opaque: every workload's driver params and every started component's
// spec. runDir stands in for {{run_dir}}. A problem found in some cells
// only says in which.
func checkPlan(p *plan.Plan, b plan.Builtins) []error {
	cells := p.RunCells(p.Repeat)
	var order []string
	var reserved []error
	for _, c := range p.Components {
		if c.Name == generatorName {
			reserved = append(reserved, errorAt(p.File, c.Pos("name"), "component name %q is perflab's own in reports; choose another", c.Name))
		}
	}
	byMsg := map[string][]string{}
	first := map[string]error{}
	add := func(cell string, err error) {
		msg := err.Error()
		if byMsg[msg] == nil {
			order = append(order, msg)
			first[msg] = err
		}
		byMsg[msg] = append(byMsg[msg], cell)
	}
	for _, c := range cells {
		inst, err := p.Expand(c, b)
		if err != nil {
			for _, e := range planErrors(err) {
				add(c.Name, e)
			}
			continue
		}
		_, errs := prepareCell(p, inst, len(cells) > 1)
		for _, e := range errs {
			add(c.Name, e)
		}
		for _, comp := range inst.Components {
			if comp.Run == nil {
				continue
			}
			for _, e := range componentSpec(comp, "", nil).Validate() {
				add(c.Name, errorAt(p.File, comp.Pos("run"), "component %s: %v", comp.Name, e))
			}

		}
	}
	sort.SliceStable(order, func(i, j int) bool { return posOf(first[order[i]]).less(posOf(first[order[j]])) })
	out := append(reserved, gatewayProblems(p)...)
	for _, msg := range order {
		if in := byMsg[msg]; len(in) < len(cells) {
			msg += fmt.Sprintf(" (in cell %s)", strings.Join(in, "; "))
		}
		out = append(out, errors.New(msg))
	}
	return out
}

// commandProblems lists the components of p whose command cannot be
// started on this machine, each at its position: perflab run refuses
// them before it starts anything, plan check warns (the plan may be meant
// for another machine).
func commandProblems(p *plan.Plan, b plan.Builtins) []error {
	var out []error
	seen := map[string]bool{}
	for _, c := range p.RunCells(p.Repeat) {
		inst, err := p.Expand(c, b)
		if err != nil {
			continue // checkPlan reports it
		}
		for _, comp := range inst.Components {
			if comp.Run == nil {
				continue
			}
			if e := commandProblem(comp.Run.Command); e != nil {
				err := errorAt(p.File, comp.Run.Pos("command"), "component %s: %v", comp.Name, e)
				if !seen[err.Error()] {
					seen[err.Error()] = true
					out = append(out, err)
				}
			}
		}
	}
	return out
}

// commandProblem says why a component's command could not be started: a
// bare name not found in PATH, or a path (made absolute by Expand) that is
// no executable file; nil when it can be, or when it is empty (Validate
// says so).
func commandProblem(command string) error {
	if command == "" {
		return nil
	}
	if !strings.Contains(command, "/") {
		if _, err := exec.LookPath(command); err != nil {
			return fmt.Errorf("command %q is not found in PATH: install it, or give its path", command)
		}
		return nil
	}
	info, err := os.Stat(command)
	switch {
	case err != nil:
		return fmt.Errorf("command %q: no such file", command)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return fmt.Errorf("command %q is not an executable file", command)
	}
	return nil
}

// driverOf is the factory of w's driver; an unknown driver is a problem
// at its position.
func driverOf(p *plan.Plan, w plan.Workload) (driverFactory, error) {
	if d, ok := drivers[w.Driver]; ok {
		return d.factory(), nil
	}
	return nil, errorAt(p.File, w.Pos("driver"), "unknown driver %q; perflab has %s", w.Driver, driverNames())
}

// errorAt is a problem at pos in the plan file.
func errorAt(file string, pos plan.Pos, format string, a ...any) error {
	return plan.Error{File: file, Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, a...)}
}

// position is where an error is in the plan file; errors without one
// come last.
type position struct{ line, col int }

func posOf(err error) position {
	var pe plan.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		return position{pe.Line, pe.Col}
	}
	return position{1 << 30, 0}
}

func (a position) less(b position) bool { return a.line < b.line || a.line == b.line && a.col < b.col }

// prepareCell decodes every workload of every profile of inst.
func prepareCell(p *plan.Plan, inst *plan.Instance, matrix bool) ([]phasePlan, []error) {
	var out []phasePlan
	var errs []error
	for _, pr := range inst.Profiles {
		pp := phasePlan{profile: pr}
		for _, w := range pr.Workloads {
			pw, werrs := prepareWorkload(p, inst.Cell, pr, w, matrix)
			errs = append(errs, werrs...)
			pp.workloads = append(pp.workloads, pw)
		}
		errs = append(errs, checkNeeds(p, pr, pp.workloads)...)
		out = append(out, pp)
	}
	return out, errs
}

func prepareWorkload(p *plan.Plan, c plan.Cell, pr plan.Profile, w plan.Workload, matrix bool) (phaseWorkload, []error) {
	at := func(key string, format string, a ...any) error { return errorAt(p.File, w.Pos(key), format, a...) }
	factory, err := driverOf(p, w)
	if err != nil {
		return phaseWorkload{}, []error{err}
	}
	spec, errs := factory(driverInput{params: w.Params, file: p.File, dir: p.Dir})
	if len(errs) > 0 {
		return phaseWorkload{}, errs
	}
	name := pr.Name + "/" + w.Name
	if matrix {
		name = c.Name + "/" + name
	}
	pw := phaseWorkload{spec: spec, eng: engine.Workload{Name: name}, plan: w, length: pr.Duration,
		desc: results.Workload{Name: name, Short: w.Name, Cell: c.Index, Profile: pr.Name, Driver: w.Driver,
			Target: spec.target, Params: storedParams(w.Params, w.Driver)}}
	sw, opBytes, err := provisional(w, spec)
	if err != nil {
		return phaseWorkload{}, []error{at("", "%v", err)}
	}
	if err := schedule(sw, pr.Duration, opBytes, &pw.eng, &pw.desc); err != nil {
		return phaseWorkload{}, []error{at("rate", "workload %s: %v", w.Name, err)}
	}
	for _, err := range pw.eng.Validate() {
		if !strings.Contains(err.Error(), "no driver") {
			errs = append(errs, at("", "workload %s: %v", w.Name, err))
		}
	}
	return pw, errs
}

// schedule sets the load model and schedule of a plan workload in a
// profile of duration d; opBytes turns byte rates into operation rates.
func schedule(w plan.Workload, d time.Duration, opBytes float64, eng *engine.Workload, desc *results.Workload) error {
	eng.Grace, desc.Grace = w.Grace, w.Grace
	if w.Model == plan.Closed {
		eng.Model, desc.Model = engine.Closed, results.ModelClosed
		eng.Conc = pacer.FixedConcurrency(w.Concurrency, d)
		if len(w.Stages) > 0 {
			st := make([]pacer.Stage, len(w.Stages))
			for i, s := range w.Stages {
				st[i] = pacer.Stage{Duration: s.Duration, Target: float64(s.Concurrency)}
			}
			eng.Conc = &pacer.Concurrency{Start: w.StartConcurrency, Stages: st}
			desc.Stages = storedStages(float64(w.StartConcurrency), st)
		}
		desc.Concurrency, desc.Duration = eng.Conc.Max(), eng.Duration()
		return nil
	}
	ops := func(r plan.Rate) (float64, error) {
		if !r.IsBytes() {
			return r.PerSecond, nil
		}
		if opBytes <= 0 {
			return 0, fmt.Errorf("byte rate %s needs a payload to divide by: this workload sends no body", r)
		}
		return r.BytesPerSecond / opBytes, nil
	}
	eng.Model, desc.Model = engine.Open, results.ModelOpen
	eng.VUsMin, eng.VUsMax, eng.Backlog = w.VUs.Min, w.VUs.Max, w.Backlog
	desc.VUsMin, desc.VUsMax, desc.Backlog = w.VUs.Min, w.VUs.Max, w.Backlog
	if len(w.Stages) == 0 {
		rate, err := ops(w.Rate)
		eng.Rate, desc.Rate, desc.Duration = pacer.Constant(rate, d), rate, d
		return err
	}
	start, err := ops(w.StartRate)
	st := make([]pacer.Stage, len(w.Stages))
	for i, s := range w.Stages {
		r, serr := ops(s.Rate)
		st[i], err = pacer.Stage{Duration: s.Duration, Target: r}, errors.Join(err, serr)
	}
	eng.Rate = pacer.NewRate(start, st)
	desc.Stages = storedStages(start, st)
	desc.Duration = eng.Duration()
	return err
}

// storedStages is a schedule as the results store keeps it: the start
// (operations/s or VUs) and the stages.
func storedStages(start float64, st []pacer.Stage) json.RawMessage {
	b, _ := json.Marshal(struct {
		Start  float64       `json:"start"`
		Stages []pacer.Stage `json:"stages"`
	}{start, st})
	return b
}

// componentSpec is how the target package starts a component of the plan.
func componentSpec(c plan.Component, logDir string, scrub *secret.Scrubber) target.Spec {
	r := c.Run
	s := target.Spec{Name: c.Name, Command: r.Command, Args: r.Args, Dir: r.Dir, StopGrace: r.StopGrace, LogDir: logDir}
	if scrub != nil {
		s.Scrub = scrub.String
	}
	if s.StopGrace == 0 { // the plan's 0 means at once; the target's zero means its default
		s.StopGrace = time.Nanosecond
	}
	for _, e := range r.Env {
		s.Env = append(s.Env, e.Name+"="+e.Value)
	}
	if r.Ready != nil {
		s.Ready = target.Probe{HTTP: r.Ready.HTTP, TCP: r.Ready.TCP, Timeout: r.Ready.Timeout}
	}
	return s
}

// builtins are the built-in template values of a run; runDir is the run
// directory, or a stand-in for it when checking.
func builtins(runDir string) (plan.Builtins, error) {
	self, err := os.Executable()
	if err != nil {
		return plan.Builtins{}, fmt.Errorf("cannot find perflab's own executable: %w", err)
	}
	return plan.Builtins{Perflab: self, RunDir: runDir}, nil
}
