package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/sut"
)

// Phase is one profile of a cell, compiled: its workloads decoded and
// scheduled, their drivers not yet built.
type Phase struct {
	Profile   plan.Profile
	Workloads []Workload
}

// Workload is one workload of a phase: its driver, not built yet, and
// its schedule and description; Eng.Driver is set when the phase starts.
// The workload as planned and its profile's duration are kept for a
// schedule that needs the built driver (SettleRate).
type Workload struct {
	Spec     registry.Spec
	Eng      engine.Workload
	Desc     results.Workload
	Plan     plan.Workload
	Length   time.Duration
	Resolved shard.Resolved // what SettleRate decided, for the workers of a distributed run
}

// Compile decodes every workload of every profile of inst, a cell of p
// expanded; matrix: the workloads' names start with the cell's.
func Compile(p *plan.Plan, inst *plan.Instance, matrix bool) ([]Phase, []error) {
	var out []Phase
	var errs []error
	for _, pr := range inst.Profiles {
		pp := Phase{Profile: pr}
		for _, w := range pr.Workloads {
			pw, werrs := CompileWorkload(p, inst.Cell, pr, w, matrix)
			errs = append(errs, werrs...)
			pp.Workloads = append(pp.Workloads, pw)
		}
		errs = append(errs, checkNeeds(p, pr, pp.Workloads)...)
		out = append(out, pp)
	}
	return out, errs
}

// CompileWorkload decodes and schedules workload w of profile pr in cell c.
func CompileWorkload(p *plan.Plan, c plan.Cell, pr plan.Profile, w plan.Workload, matrix bool) (Workload, []error) {
	at := func(key string, format string, a ...any) error { return plan.ErrorAt(p.File, w.Pos(key), format, a...) }
	if err := checkDriver(p, w); err != nil {
		return Workload{}, []error{err}
	}
	spec, errs := registry.Decode(w.Driver, registry.Input{Params: w.Params, File: p.File, Dir: p.Dir})
	if len(errs) > 0 {
		return Workload{}, errs
	}
	name, profile := pr.Name+"/"+w.Name, pr.Name
	switch {
	case p.Implicit: // in no profile of its own, as the run records it
		name, profile = w.Name, ""
	case matrix:
		name = c.Name + "/" + name
	}
	pw := Workload{Spec: spec, Eng: engine.Workload{Name: name, Interval: p.ResultInterval}, Plan: w, Length: pr.Duration,
		Desc: results.Workload{Name: name, Short: w.Name, Cell: c.Index, Profile: profile, Driver: w.Driver,
			Target: spec.Target, Params: registry.StoredParams(w.Params, w.Driver)}}
	sw, opBytes, err := provisional(w, spec)
	if err != nil {
		return Workload{}, []error{at("", "%v", err)}
	}
	if err := Schedule(sw, pr.Duration, opBytes, &pw.Eng, &pw.Desc); err != nil {
		return Workload{}, []error{at("rate", "workload %s: %v", w.Name, err)}
	}
	for _, err := range pw.Eng.Validate() {
		if !strings.Contains(err.Error(), "no driver") {
			errs = append(errs, at("", "workload %s: %v", w.Name, err))
		}
	}
	return pw, errs
}

// Schedule sets the load model and schedule of a plan workload in a
// profile of duration d; opBytes turns byte rates into operation rates.
func Schedule(w plan.Workload, d time.Duration, opBytes float64, eng *engine.Workload, desc *results.Workload) error {
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
	eng.VUsMin, eng.VUsMax, eng.Backlog, eng.Quantum = w.VUs.Min, w.VUs.Max, w.Backlog, w.DispatchQuantum
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

// ComponentSpec is how the target package starts a component of the plan.
func ComponentSpec(c plan.Component, logDir string, scrub func(string) string) sut.Spec {
	r := c.Run
	s := sut.Spec{Name: c.Name, Command: r.Command, Args: r.Args, Dir: r.Dir, StopGrace: r.StopGrace, LogDir: logDir}
	s.Scrub = scrub
	if s.StopGrace == 0 { // the plan's 0 means at once; the target's zero means its default
		s.StopGrace = time.Nanosecond
	}
	for _, e := range r.Env {
		s.Env = append(s.Env, e.Name+"="+e.Value)
	}
	if r.Ready != nil {
		s.Ready = sut.Probe{HTTP: r.Ready.HTTP, TCP: r.Ready.TCP, Timeout: r.Ready.Timeout}
	}
	return s
}

// Builtins are the built-in template values of a run; runDir is the run
// directory, or a stand-in for it when checking.
func Builtins(runDir string) (plan.Builtins, error) {
	self, err := os.Executable()
	if err != nil {
		return plan.Builtins{}, fmt.Errorf("cannot find perflab's own executable: %w", err)
	}
	return plan.Builtins{Perflab: self, RunDir: runDir}, nil
}
