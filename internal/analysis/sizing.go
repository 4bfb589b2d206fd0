package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/units"
)

// Percentiles are the figures of one resource series over a window that
// sizing strategies draw on. Every percentile is nearest-rank, like Stat's
// P99: the value of rank ⌈p/100 × N⌉, always an observed value. With fewer
// than MinSamplesP99 samples there are no percentiles (HasPercentiles).
type Percentiles struct {
	N                  int
	P50, P90, P95, P99 float64
	Max, Avg           float64
	SD                 float64 // the samples' standard deviation
}

// HasPercentiles reports whether the sample supports the percentiles.
func (p Percentiles) HasPercentiles() bool { return p.N >= MinSamplesP99 }

// PercentilesOf computes the Percentiles of vs; vs is not modified.
func PercentilesOf(vs []float64) Percentiles {
	s, sorted := statSorted(vs)
	p := Percentiles{N: s.N, Max: s.Max, Avg: s.Avg, P99: s.P99}
	if !p.HasPercentiles() {
		return p
	}
	p.P50, p.P90, p.P95 = nearestRank(sorted, 50), nearestRank(sorted, 90), nearestRank(sorted, 95)
	var ss float64
	for _, v := range vs {
		ss += (v - p.Avg) * (v - p.Avg)
	}
	p.SD = math.Sqrt(ss / float64(len(vs)))
	return p
}

// SizingInput is one component's samples over a window and what is known
// about the window's fitness for sizing.
type SizingInput struct {
	Component string
	CPU       []float64     // cores, one per sample time in the window
	Memory    []float64     // bytes
	Window    time.Duration // the length of the window the samples cover
	WarmUp    time.Duration // how long the component takes to settle; 0 when unknown
	Restarts  int           // times the component restarted in the window
	Exited    bool          // the component exited in the window
}

// SizingOptions set the default strategy's headroom and every strategy's
// limit factor.
type SizingOptions struct {
	Headroom    float64 // p99: requests = P99 × (1 + Headroom)
	LimitFactor float64 // limits = requests × LimitFactor (p99, vpa)
	// Basis is the figure the p99 strategy's requests rest on: BasisP99
	// ("" too), BasisP95 or BasisMean3SD.
	Basis string
}

// The figures the p99 strategy may rest on (perflab size --basis).
const (
	BasisP99     = "p99"
	BasisP95     = "p95"
	BasisMean3SD = "mean+3sd"
)

// basisOf is the figure o's basis names, with its name in a rule.
func basisOf(p Percentiles, o SizingOptions) BasisFigure {
	switch o.Basis {
	case BasisP95:
		return BasisFigure{"P95", p.P95}
	case BasisMean3SD:
		return BasisFigure{"(mean + 3 sd)", p.Avg + 3*p.SD}
	}
	return BasisFigure{"P99", p.P99}
}

// DefaultSizingOptions are 25 % headroom and limits 1.5 × requests.
func DefaultSizingOptions() SizingOptions {
	return SizingOptions{Headroom: 0.25, LimitFactor: 1.5}
}

// Validate reports every option out of range.
func (o SizingOptions) Validate() []error {
	var errs []error
	if !(o.Headroom >= 0) {
		errs = append(errs, fmt.Errorf("headroom %v: want 0 or more (0.25 is 25 %%)", o.Headroom))
	}
	if !(o.LimitFactor >= 1) {
		errs = append(errs, fmt.Errorf("limit factor %v: want 1 or more (limits are never below requests)", o.LimitFactor))
	}
	if o.Basis != "" && o.Basis != BasisP99 && o.Basis != BasisP95 && o.Basis != BasisMean3SD {
		errs = append(errs, fmt.Errorf("basis %q: want %s, %s or %s", o.Basis, BasisP99, BasisP95, BasisMean3SD))
	}
	return errs
}

// BasisFigure is one figure a recommendation rests on, e.g. {"P99", 1.46}.
type BasisFigure struct {
	Name  string
	Value float64 // cores or bytes
}

// Recommendation is a strategy's request and limit for one resource.
type Recommendation struct {
	Request Quantity      // zero when the sample can't support a figure
	Limit   Quantity      // zero when there is no figure or NoLimit
	NoLimit bool          // the strategy sets no limit (krr's CPU)
	Rule    string        // how Request and Limit were derived, e.g. "request = P99 × 1.25; limit = request × 1.5"
	Inputs  []BasisFigure // the figures used, unrounded
	// Lower and Upper are the VPA recommender's bounds, rounded up like
	// requests; zero for other strategies.
	Lower, Upper Quantity
}

// Sizing is one component's recommendation under one strategy.
type Sizing struct {
	Component string
	Strategy  string
	CPU       Recommendation
	Memory    Recommendation
	Warnings  []string
}

// rawRecommendation is a strategy's output before rounding.
type rawRecommendation struct {
	request      float64
	limitFactor  float64 // limit = rounded request × limitFactor; 0 with noLimit
	noLimit      bool
	rule         string
	inputs       []BasisFigure
	lower, upper float64 // 0 when the strategy has no bounds
}

// Strategy turns a component's percentiles into requests and limits.
type Strategy struct {
	Name   string
	Doc    string // how requests and limits are set, in one sentence
	cpu    func(Percentiles, SizingOptions) rawRecommendation
	memory func(Percentiles, SizingOptions) rawRecommendation
}

// strategies is the registry of sizing strategies by name.
var strategies = map[string]Strategy{
	"p99": {Name: "p99", Doc: "requests = P99 × (1 + headroom), limits = requests × factor (defaults 25 % and 1.5)",
		cpu: p99Rule, memory: p99Rule},
	"vpa": {Name: "vpa", Doc: "as the Kubernetes VPA recommender: requests = target = P90 × 1.15, " +
		"lower bound P50 × 1.15, upper bound P95 × 1.15 (reported, not applied); limits = requests × factor",
		cpu: vpaRule, memory: vpaRule},
	"krr": {Name: "krr", Doc: "as Robusta KRR's simple strategy: CPU request = P95 with no CPU limit; memory request = limit = Max × 1.15",
		cpu: krrCPURule, memory: krrMemoryRule},
}

// DefaultStrategy is the strategy reports use unless told otherwise.
const DefaultStrategy = "p99"

// ParseStrategy returns the strategy called name.
func ParseStrategy(name string) (Strategy, error) {
	if s, ok := strategies[name]; ok {
		return s, nil
	}
	return Strategy{}, fmt.Errorf("cannot find sizing strategy %q: known strategies are %s", name, strings.Join(StrategyNames(), ", "))
}

// StrategyNames lists the registered strategies in alphabetical order.
func StrategyNames() []string {
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// vpaMargin is the VPA recommender's safety margin.
const vpaMargin = 0.15

func p99Rule(p Percentiles, o SizingOptions) rawRecommendation {
	f, b := 1+o.Headroom, basisOf(p, o)
	return rawRecommendation{request: b.Value * f, limitFactor: o.LimitFactor,
		rule:   fmt.Sprintf("request = %s × %.4g; limit = request × %.4g", b.Name, f, o.LimitFactor),
		inputs: []BasisFigure{b}}
}

func vpaRule(p Percentiles, o SizingOptions) rawRecommendation {
	f := 1 + vpaMargin
	return rawRecommendation{request: p.P90 * f, limitFactor: o.LimitFactor,
		rule:   fmt.Sprintf("request = P90 × %.4g; limit = request × %.4g; bounds P50 × %.4g, P95 × %.4g", f, o.LimitFactor, f, f),
		inputs: []BasisFigure{{"P50", p.P50}, {"P90", p.P90}, {"P95", p.P95}},
		lower:  p.P50 * f, upper: p.P95 * f}
}

func krrCPURule(p Percentiles, _ SizingOptions) rawRecommendation {
	return rawRecommendation{request: p.P95, noLimit: true, rule: "request = P95; no limit",
		inputs: []BasisFigure{{"P95", p.P95}}}
}

func krrMemoryRule(p Percentiles, _ SizingOptions) rawRecommendation {
	f := 1 + vpaMargin
	return rawRecommendation{request: p.Max * f, limitFactor: 1,
		rule: fmt.Sprintf("request = limit = Max × %.4g", f), inputs: []BasisFigure{{"Max", p.Max}}}
}

// Size recommends requests and limits for one component. Requests are
// rounded up with RoundUp; limits are the rounded request × the factor,
// rounded up again, so a limit is never below factor × the request shown.
// A resource with fewer than MinSamplesP99 samples gets no figure and a
// warning; a window shorter than the warm-up, a restart or an exit in the
// window keep the figures but add a warning.
func Size(in SizingInput, s Strategy, o SizingOptions) (Sizing, error) {
	if s.cpu == nil || s.memory == nil {
		return Sizing{}, fmt.Errorf("cannot size %s: strategy %q is not registered (use ParseStrategy)", in.Component, s.Name)
	}
	if errs := o.Validate(); len(errs) > 0 {
		return Sizing{}, fmt.Errorf("cannot size %s: %w", in.Component, errors.Join(errs...))
	}
	sz := Sizing{Component: in.Component, Strategy: s.Name}
	var warn []string
	sz.CPU, warn = recommend(ResourceCPU, in.Component, in.CPU, s.cpu, o)
	sz.Warnings = append(sz.Warnings, warn...)
	sz.Memory, warn = recommend(ResourceMemory, in.Component, in.Memory, s.memory, o)
	sz.Warnings = append(sz.Warnings, warn...)
	sz.Warnings = append(sz.Warnings, windowWarnings(in)...)
	return sz, nil
}

func recommend(r Resource, component string, vs []float64, rule func(Percentiles, SizingOptions) rawRecommendation, o SizingOptions) (Recommendation, []string) {
	p := PercentilesOf(vs)
	if !p.HasPercentiles() {
		return Recommendation{}, []string{fmt.Sprintf("component %s has %d %s samples in the window: no %s figure (sizing needs at least %d)",
			component, p.N, r, r, MinSamplesP99)}
	}
	raw := rule(p, o)
	rec := Recommendation{Request: RoundUp(r, raw.request), NoLimit: raw.noLimit, Rule: raw.rule, Inputs: raw.inputs}
	var warns []string
	if len(raw.inputs) == 1 && raw.inputs[0].Name == "P99" && p.N < 100 && p.P99 == p.Max && p.Max > SpikeFactor*p.P90 {
		warns = append(warns, fmt.Sprintf("component %s's %s P99 is the maximum of its %d samples (a P99 other than the maximum needs 100), "+
			"%.3g× their P90: one spike sets its size (average %s); --basis p95 or mean+3sd rests on more of them",
			component, r, p.N, p.Max/p.P90, avgText(r, p.Avg)))
	}
	if !raw.noLimit {
		rec.Limit = RoundUp(r, rec.Request.Value()*raw.limitFactor)
	}
	if raw.upper > 0 {
		rec.Lower, rec.Upper = RoundUp(r, raw.lower), RoundUp(r, raw.upper)
	}
	return rec, warns
}

// avgText is an average of resource r in its unit.
func avgText(r Resource, v float64) string {
	if r == ResourceCPU {
		return units.Sig3(v) + " cores"
	}
	return units.FormatBytes(v)
}

// SpikeFactor is how far above the P90 the maximum of fewer than 100
// samples must lie, as their P99, for the sizing to warn that one spike
// set the size.
const SpikeFactor = 1.5

func windowWarnings(in SizingInput) []string {
	var out []string
	if in.WarmUp > 0 && in.Window < in.WarmUp {
		out = append(out, fmt.Sprintf("the window (%v) is shorter than the warm-up (%v): %s may not have reached its steady state, and its figures may be low",
			in.Window, in.WarmUp, in.Component))
	}
	if in.Restarts > 0 {
		out = append(out, fmt.Sprintf("component %s restarted in the window (%s): its figures mix fresh and settled processes", in.Component, plural(in.Restarts, "time")))
	}
	if in.Exited {
		out = append(out, fmt.Sprintf("component %s exited in the window: its figures stop there and may understate what it needs", in.Component))
	}
	return out
}

// plural is "1 time", "2 times".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// SizingInputs takes every component of the system under test (not the
// generator) from a phase's series: the samples of its memory and CPU
// metrics over in.Window, chosen as SummarizeResources chooses them, and
// whether it exited in the window. Restarts are not in ResourceInput; set
// them on the result when known.
func SizingInputs(in ResourceInput, warmUp time.Duration) []SizingInput {
	var out []SizingInput
	for _, c := range allComponents(in) {
		if c.Kind == KindGenerator {
			continue
		}
		si := SizingInput{Component: c.Name, Window: in.Window.End.Sub(in.Window.Start), WarmUp: warmUp,
			Exited: !c.Exited.IsZero() && c.Exited.After(in.Window.Start) && !c.Exited.After(in.Window.End)}
		si.Memory = values(pickSeries(in.Series[c.Name], in.Window, memoryMetrics))
		si.CPU = values(pickSeries(in.Series[c.Name], in.Window, cpuMetrics))
		out = append(out, si)
	}
	return out
}

// pickSeries is the windowed series of the first of prefs that has points
// in w.
func pickSeries(series map[string][]Point, w Window, prefs []string) []Point {
	for _, m := range prefs {
		if ps := pointsIn(series[m], w); len(ps) > 0 {
			return ps
		}
	}
	return nil
}
