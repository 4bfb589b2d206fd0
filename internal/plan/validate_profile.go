package plan

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// profile checks one profile and its workloads.
func (v *validator) profile(p *Profile) {
	v.name(p.at, "profile", p.Name)
	switch {
	case p.Duration <= 0 && !p.at.has("duration"):
		v.at(p.at, "duration", "%s needs a duration", label("profile", p.Name))
	case p.Duration <= 0:
		v.at(p.at, "duration", "%s %v must be > 0", p.at.name("duration", "duration"), p.Duration)
	}
	if p.Warmup < 0 || p.Duration > 0 && p.Warmup >= p.Duration {
		v.at(p.at, "warmup", "%s %v must be >= 0 and shorter than %s %v", p.at.name("warmup", "warmup"), p.Warmup,
			p.at.name("duration", "the duration"), p.Duration)
	}
	if len(p.Workloads) == 0 {
		v.at(p.at, "workloads", "%s has no workloads", label("profile", p.Name))
	}
	names := map[string]Pos{}
	for i := range p.Workloads {
		w := &p.Workloads[i]
		v.unique(names, w.Name, w.at, "workload")
		v.workload(w, p.Duration)
	}
	v.profileGates(p)
}

// workload checks one workload; d is its profile's duration.
func (v *validator) workload(w *Workload, d time.Duration) {
	v.name(w.at, "workload", w.Name)
	if w.Driver == "" {
		v.at(w.at, "driver", "%s needs a driver", label("workload", w.Name))
	}
	if w.Grace < 0 {
		v.at(w.at, "grace", "%s %v must be >= 0", w.at.name("grace", "grace"), w.Grace)
	}
	multi := v.shape(w)
	switch w.Model {
	case Open:
		v.open(w, multi)
	case Closed:
		v.closed(w, multi)
	default:
		v.at(w.at, "model", "model %q: want open or closed", w.Model)
	}
	v.stages(w, d)
	v.workloadGates(w)
	if w.Params.node != nil && !w.Params.FromFlags() { // values from flags are taken as they are
		v.params(w.Params.node)
	}
}

// given reports whether a workload field was set, in the file or in Go.
func given(w *Workload, key string) bool {
	if w.at.has(key) {
		return true
	}
	switch key {
	case "rate":
		return !w.Rate.IsZero()
	case "concurrency":
		return w.Concurrency != 0
	case "stages":
		return len(w.Stages) > 0
	case "start_rate":
		return !w.StartRate.IsZero()
	case "start_concurrency":
		return w.StartConcurrency != 0
	case "vus":
		return w.VUs != VUs{} || w.at.has("vus.min") || w.at.has("vus.max")
	case "backlog":
		return w.Backlog != 0
	case "dispatch_quantum":
		return w.DispatchQuantum != 0
	}
	return false
}

// shape checks that at most one of rate, concurrency and stages is given
// (none: an open-model workload at the rate its driver implies, which the
// driver's decoder checks), and that start values come with stages. It
// reports whether several were given.
func (v *validator) shape(w *Workload) (multi bool) {
	var shape []string
	for _, k := range []string{"rate", "concurrency", "stages"} {
		if given(w, k) {
			shape = append(shape, k)
		}
	}
	switch {
	case len(shape) == 0 && w.Model == Closed:
		v.at(w.at, "", "%s needs concurrency or stages", label("workload", w.Name))
	case len(shape) > 1:
		names := make([]string, len(shape))
		for i, k := range shape {
			names[i] = w.at.name(k, k)
		}
		whose := label("workload", w.Name) + ": "
		if v.implicit {
			whose = ""
		}
		v.at(w.at, shape[1], "%sgive one of %s, not both", whose, strings.Join(names, " and "))
	}
	for _, k := range []string{"start_rate", "start_concurrency"} {
		if given(w, k) && !given(w, "stages") {
			v.at(w.at, k, "%s applies only with stages", k)
		}
	}
	return len(shape) > 1
}

// open checks the open-model fields and rejects the closed-model ones;
// multi says the shape check already reported conflicting fields.
func (v *validator) open(w *Workload, multi bool) {
	for _, k := range []string{"concurrency", "start_concurrency"} {
		if given(w, k) && !(multi && k == "concurrency") {
			v.at(w.at, k, "%s applies to the closed model, and this workload is open (set model: closed)", k)
		}
	}
	if given(w, "rate") && !(w.Rate.PerSecond > 0 || w.Rate.BytesPerSecond > 0) {
		v.at(w.at, "rate", "%s must be > 0", w.at.name("rate", "rate"))
	}
	if !finite(w.Rate.PerSecond) || !finite(w.Rate.BytesPerSecond) {
		v.at(w.at, "rate", "rate must be a finite number")
	}
	if !finite(w.StartRate.PerSecond) || !finite(w.StartRate.BytesPerSecond) {
		v.at(w.at, "start_rate", "start_rate must be a finite number >= 0")
	}
	vmin, vmax := w.at.name("vus.min", "vus.min"), w.at.name("vus.max", "vus.max")
	if w.VUs.Max < 1 {
		v.at(w.at, "vus.max", "%s %d must be >= 1", vmax, w.VUs.Max)
	}
	switch {
	case w.VUs.Min < 0:
		v.at(w.at, "vus.min", "%s %d must be >= 0", vmin, w.VUs.Min)
	case w.VUs.Min > w.VUs.Max && w.VUs.Max >= 1:
		v.at(w.at, "vus.min", "%s %d is larger than %s %d", vmin, w.VUs.Min, vmax, w.VUs.Max)
	}
	if w.Backlog < 0 {
		v.at(w.at, "backlog", "%s %d must be >= 0", w.at.name("backlog", "backlog"), w.Backlog)
	}
	if given(w, "dispatch_quantum") && w.DispatchQuantum <= 0 {
		v.at(w.at, "dispatch_quantum", "%s %v must be > 0 (1ns sends each arrival on its own)",
			w.at.name("dispatch_quantum", "dispatch_quantum"), w.DispatchQuantum)
	}
}

// closed checks the closed-model fields and rejects the open-model ones.
func (v *validator) closed(w *Workload, multi bool) {
	closedBecause := ", and this workload is closed"
	if f := w.at.name("model", ""); f != "" { // from a command line: the flag that makes a workload open
		closedBecause = " (" + f + ")"
	}
	for _, k := range []string{"rate", "start_rate", "vus", "backlog", "dispatch_quantum"} {
		if given(w, k) && !(multi && k == "rate") {
			v.at(w.at, k, "%s applies to the open model%s", w.at.name(k, k), closedBecause)
		}
	}
	if given(w, "concurrency") && w.Concurrency < 1 {
		v.at(w.at, "concurrency", "%s %d must be >= 1", w.at.name("concurrency", "concurrency"), w.Concurrency)
	}
	if w.StartConcurrency < 0 {
		v.at(w.at, "start_concurrency", "start_concurrency %d must be >= 0", w.StartConcurrency)
	}
}

func finite(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// stages checks each stage, that rates are all of one kind, and that the
// stages fit in the profile's duration d.
func (v *validator) stages(w *Workload, d time.Duration) {
	var total time.Duration
	bytes, ops := w.StartRate.IsBytes(), w.StartRate.PerSecond > 0
	for i, s := range w.Stages {
		n := strconv.Itoa(i + 1)
		if s.Duration <= 0 {
			v.at(s.at, "duration", "stage %s: duration %v must be > 0", n, s.Duration)
		}
		total += max(s.Duration, 0)
		switch {
		case w.Model == Closed && s.Concurrency < 0:
			v.at(s.at, "target", "stage %s: target %d must be >= 0", n, s.Concurrency)
		case w.Model != Closed && (!finite(s.Rate.PerSecond) || !finite(s.Rate.BytesPerSecond)):
			v.at(s.at, "target", "stage %s: target must be a finite rate >= 0", n)
		case w.Model != Closed && (bytes && s.Rate.PerSecond > 0 || ops && s.Rate.IsBytes()):
			v.at(s.at, "target", "stage %s: target mixes operation and byte rates; use one kind in a workload", n)
		}
		bytes, ops = bytes || s.Rate.IsBytes(), ops || s.Rate.PerSecond > 0
	}
	if d > 0 && total > d {
		v.at(w.at, "stages", "stages last %v, longer than the profile's duration %v", total, d)
	}
}

// params checks the templates in every string value of a params tree.
func (v *validator) params(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			v.tmpl(where{"": posOf(n)}, "params", n.Value)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
			v.params(n.Content[i])
		}
	default:
		for _, c := range n.Content {
			v.params(c)
		}
	}
}
