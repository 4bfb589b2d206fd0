package analysis

import (
	"fmt"
	"math"

	"github.com/perflab/perflab/internal/units"
)

// The thresholds observations are made at.
const (
	// PrimaryShare is the share of a resource (of the sum of the
	// components' P99s) at which the largest component is named as its
	// primary consumer.
	PrimaryShare = 0.40
	// ConstantSpread is the widest spread, (max − min) / mean over the
	// profiles, of a resource whose slope is not significant for it to be
	// called constant across load. A wider spread with no significant slope
	// is noise the data can't explain, and nothing is said.
	ConstantSpread = 0.20
)

// The kinds of observation.
const (
	ObsClientBound  = "client-bound"  // the generator was the limit
	ObsUnsustained  = "unsustained"   // the system did not hold the profile's load
	ObsMachineBound = "machine-bound" // the generator and the components it started filled the machine
	ObsMachineBusy  = "machine-busy"  // other work filled the machine beside them
	ObsShare        = "share"         // one component is the primary consumer of a resource
	ObsLinear       = "linear"        // a resource follows load in a straight line
	ObsConstant     = "constant"      // a resource does not change with load
	ObsNotLinear    = "not-linear"    // a resource changes with load, but not in a straight line
)

// Observation is a plain-language statement and the figures it rests on.
type Observation struct {
	Kind      string
	Component string // TotalComponent for the system as a whole; "" for the generator
	Metric    string // MetricCPU or MetricMemory; "" for client-bound
	Text      string
	Figures   []ObsFigure
}

// ObsFigure is one figure an observation rests on.
type ObsFigure struct {
	Name  string // e.g. "share in 1x-small", "R²", "slope"
	Value float64
	Unit  string // "", "cores", "bytes", "cores per samples/s", …
}

// Phase is one profile's resource figures and, optionally, its workloads'
// summaries (for client-bound verdicts from unissued arrivals).
type Phase struct {
	Profile   string
	Resources *Resources
	Summaries []*Summary
	Held      Held // whether the system held the load (JudgeHeld)
}

// Observe makes the statements the data supports, in this order: phases
// where the generator was the limit (by its CPU, or else the arrivals a
// workload's dispatcher did not issue); the primary consumer of memory and of
// CPU (the largest component, at PrimaryShare or more of the sum of the
// components' P99s in every phase where all have a P99); then, from the
// scaling fits, resources that follow load linearly (not Poor, slope
// significant), that are constant (slope not significant with at least
// MinFitPoints points, spread at most ConstantSpread), and that change with
// load but not in a straight line (Poor with a significant slope).
func Observe(phases []Phase, scalings []Scaling) []Observation {
	var out []Observation
	for _, p := range phases {
		out = append(out, clientBound(p)...)
		out = append(out, heldObservations(p)...)
	}
	for _, metric := range []string{MetricMemory, MetricCPU} {
		if o, ok := primaryConsumer(phases, metric); ok {
			out = append(out, o)
		}
	}
	// With one component the system's total is that component: saying
	// the same of both would only repeat it.
	components := map[string]bool{}
	for _, sc := range scalings {
		if sc.Component != TotalComponent {
			components[sc.Component] = true
		}
	}
	for _, kind := range []string{ObsLinear, ObsConstant, ObsNotLinear} {
		for _, sc := range scalings {
			if sc.Component == TotalComponent && len(components) == 1 {
				continue
			}
			if o, ok := scalingObservation(sc); ok && o.Kind == kind {
				out = append(out, o)
			}
		}
	}
	return out
}

// clientBound says where the generator was the limit: by its CPU (the
// phase's resources) or, failing that, by the arrivals it did not issue
// (a workload's summary).
func clientBound(p Phase) []Observation {
	if r := p.Resources; r != nil && r.ClientBound {
		return []Observation{{Kind: ObsClientBound,
			Figures: []ObsFigure{{"cores available", r.CoresAvailable, "cores"}, {"generator CPU P99", r.GeneratorCPU, "cores"}},
			Text: fmt.Sprintf("in %s the generator was the limit (client-bound): its CPU P99 was %.3g of %.3g cores",
				p.Profile, r.GeneratorCPU, r.CoresAvailable)}}
	}
	var out []Observation
	for _, s := range p.Summaries {
		if why := unissuedWhy(s.Workload); why != "" {
			due := s.Workload.Scheduled + s.Workload.Unissued
			out = append(out, Observation{Kind: ObsClientBound,
				Text: fmt.Sprintf("in %s the generator was the limit (client-bound) for %s: %s",
					p.Profile, s.Workload.DisplayName(), why),
				Figures: []ObsFigure{{"arrivals due", float64(due), ""}, {"not issued", float64(s.Workload.Unissued), ""}}})
		}
	}
	return out
}

// heldObservations say where the system did not hold the load, and where
// the machine was the limit.
func heldObservations(p Phase) []Observation {
	var out []Observation
	h := p.Held
	if !h.Sustained() {
		out = append(out, Observation{Kind: ObsUnsustained,
			Text: fmt.Sprintf("in %s the system did not hold the load (unsustained): %s; its size is marked, and it is left out of the scaling fits: the system's capacity was reached below that load",
				p.Profile, h.Why())})
	}
	if h.MachineBound != "" {
		out = append(out, Observation{Kind: ObsMachineBound,
			Text: fmt.Sprintf("in %s the machine was the limit (machine-bound): %s; its size is marked, and it is left out of the scaling fits; %s",
				p.Profile, h.MachineBound, machineAdviceShort)})
	}
	if h.MachineBusy != "" {
		out = append(out, Observation{Kind: ObsMachineBusy,
			Text: fmt.Sprintf("in %s other work kept the machine busy (machine-busy): %s; its size is marked, and it is left out of the scaling fits",
				p.Profile, h.MachineBusy)})
	}
	return out
}

// primaryConsumer names the component that is the largest consumer of the
// metric, at PrimaryShare or more, in every phase that supports shares.
func primaryConsumer(phases []Phase, metric string) (Observation, bool) {
	var name string
	var figs []ObsFigure
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range phases {
		top, share, ok := largestShare(p.Resources, metric)
		if !ok {
			continue
		}
		if name != "" && top != name || share < PrimaryShare {
			return Observation{}, false
		}
		name = top
		lo, hi = min(lo, share), max(hi, share)
		figs = append(figs, ObsFigure{"share in " + p.Profile, share, ""})
	}
	if name == "" {
		return Observation{}, false
	}
	what := map[string]string{MetricMemory: "memory", MetricCPU: "CPU"}[metric]
	text := fmt.Sprintf("%s accounts for %s of %s", name, percentRange(lo, hi), what)
	if len(figs) > 1 {
		text += fmt.Sprintf(" across %d profiles", len(figs))
	}
	return Observation{Kind: ObsShare, Component: name, Metric: metric, Text: text + " (of the sum of the components' P99s)", Figures: figs}, true
}

// largestShare is the component with the largest P99 of the metric and its
// share of the sum of the components' P99s, when every component has one.
func largestShare(r *Resources, metric string) (string, float64, bool) {
	if r == nil {
		return "", 0, false
	}
	sum := r.Memory.Sum
	if metric == MetricCPU {
		sum = r.CPU.Sum
	}
	// equivalent mutant: sum.P99 < 0; a sum of 0 means every component's P99
	// is 0 (none is negative), none tops best (0) below: the phase is left out.
	if !sum.HasP99() || sum.P99 <= 0 || r.Memory.Components < 2 && metric == MetricMemory || r.CPU.Components < 2 && metric == MetricCPU {
		return "", 0, false
	}
	var top string
	var best float64
	for _, c := range r.Components {
		if c.Kind == KindGenerator {
			continue
		}
		if s := statFor(r, c.Name, metric); s.HasP99() && s.P99 > best {
			top, best = c.Name, s.P99
		}
	}
	return top, best / sum.P99, top != ""
}

func percentRange(lo, hi float64) string {
	a, b := math.Round(100*lo), math.Round(100*hi)
	if a == b {
		return fmt.Sprintf("%.0f %%", a)
	}
	return fmt.Sprintf("%.0f–%.0f %%", a, b)
}

// scalingObservation is what a fit supports saying, if anything.
func scalingObservation(sc Scaling) (Observation, bool) {
	f := sc.Fit
	if f == nil || f.N < MinFitPoints {
		return Observation{}, false
	}
	unit := map[string]string{MetricMemory: "bytes", MetricCPU: "cores"}[sc.Metric]
	subject := resourceSubject(sc.Component, sc.Metric)
	o := Observation{Component: sc.Component, Metric: sc.Metric, Figures: []ObsFigure{
		{"R²", f.R2, ""}, {"slope", f.Slope, unit + " per " + sc.LoadUnit}, {"intercept", f.Intercept, unit}, {"profiles", float64(f.N), ""},
	}}
	switch {
	case f.Constant:
		lo, hi, mean := spread(sc.Points)
		if mean <= 0 || (hi-lo)/mean > ConstantSpread {
			return Observation{}, false
		}
		o.Kind = ObsConstant
		from, to := formatResource(sc.Metric, lo), formatResource(sc.Metric, hi)
		o.Text = fmt.Sprintf("%s is constant across load: %s on average (%s to %s over %d profiles)", subject,
			formatResource(sc.Metric, mean), from, to, f.N)
		if from == to {
			o.Text = fmt.Sprintf("%s is constant across load: %s in all %d profiles", subject, from, f.N)
		}
		o.Figures = append(o.Figures, ObsFigure{"mean", mean, unit}, ObsFigure{"min", lo, unit}, ObsFigure{"max", hi, unit})
	case !f.Poor:
		o.Kind = ObsLinear
		verb := "scales linearly"
		if f.Slope < 0 { // equivalent mutant: <= 0; FitLine calls a slope of exactly 0 Constant (t = 0)
			verb = "falls linearly"
		}
		o.Text = fmt.Sprintf("%s %s with load in %s (R² %.2f over %d profiles)", subject, verb, sc.LoadUnit, f.R2, f.N)
	default:
		o.Kind = ObsNotLinear
		o.Text = fmt.Sprintf("%s changes with load in %s, but not in a straight line (R² %.2f over %d profiles)", subject, sc.LoadUnit, f.R2, f.N)
	}
	return o, true
}

func resourceSubject(component, metric string) string {
	what := map[string]string{MetricMemory: "memory", MetricCPU: "CPU"}[metric]
	if component == TotalComponent {
		return what
	}
	return component + " " + what
}

func spread(ps []ScalingValue) (lo, hi, mean float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo, hi, mean = min(lo, p.Value), max(hi, p.Value), mean+p.Value
	}
	return lo, hi, mean / float64(len(ps))
}

func formatResource(metric string, v float64) string {
	if metric == MetricMemory {
		return units.FormatBytes(v)
	}
	return fmt.Sprintf("%.3g cores", v)
}
