package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/units"
)

// PhaseData is what a cell's insights need of one profile that ran in it:
// its figures and the samples sizing draws on.
type PhaseData struct {
	Profile   string // the size's name
	State     string // "" or "completed" when the phase ran to its end
	Resources *Resources
	Summaries []*Summary
	Sizing    []SizingInput // each component's samples over the phase's window
	// ErrorLimit is the share of a workload's requests that may fail for
	// the phase to count as held: the plan's error_rate gate's bound, or 0
	// for ErrorLimit.
	ErrorLimit float64
}

// LoadBasis is the figure that stands for a profile's load in scaling fits
// and predictions.
type LoadBasis uint8

const (
	// LoadRequests is the load workload's achieved requests per second.
	LoadRequests LoadBasis = iota
	// LoadBytes is the load workload's bytes sent and received per
	// second: the payload it moved, e.g. trace or sample bytes of an
	// ingestion, object bytes of S3 GETs and PUTs.
	LoadBytes
)

// Unit is the unit of a load of this basis.
func (b LoadBasis) Unit() string {
	if b == LoadBytes {
		return "bytes/s"
	}
	return "requests/s"
}

// InsightOptions say how a cell's sizes are computed and which load its
// scaling fits follow.
type InsightOptions struct {
	Strategy Strategy
	Sizing   SizingOptions
	// Load is the basis the fits follow. A requests/s basis becomes
	// bytes/s where the load workload's requests differ in size between
	// profiles (see SizeSpread): then requests/s does not measure load.
	Load LoadBasis
}

// SizeSpread is how much the mean bytes moved per request (sent and
// received) may differ between profiles, as the ratio of the largest to
// the smallest, for requests/s to stay the load's unit.
const SizeSpread = 2.0

// DefaultInsightOptions size with the default strategy and options and fit
// against requests per second.
func DefaultInsightOptions() InsightOptions {
	s, _ := ParseStrategy(DefaultStrategy)
	return InsightOptions{Strategy: s, Sizing: DefaultSizingOptions()}
}

// Insights are a cell's suggested sizes (one per profile), the scaling of
// its components across profiles and the observations the data supports.
type Insights struct {
	Strategy     Strategy
	Options      SizingOptions
	Sizes        []TShirt
	Load         LoadBasis
	LoadNote     string    // why Load is not the one asked for; "" when it is
	LoadWorkload string    // the workload whose rate is each profile's load; "" when none ran in every profile
	Loads        []float64 // each size's load in Load's unit, in the order of Sizes; 0 when unknown
	// RequestBytes is the mean bytes the load workload moved per request
	// (sent and received) over the sized phases: their bytes over their
	// requests; 0 when it moved none.
	RequestBytes float64
	Scaling      []Scaling // nil with fewer than 2 profiles
	Observations []Observation
	Warnings     []string
}

// CellInsights sizes every phase that has resource samples of the system
// under test, fits each component's CPU and memory P99 against the load
// across them (with two or more), and makes the observations. A size's
// Load is its workloads' achieved rates (and byte rates); the scaling load
// is the achieved rate of the first workload that ran in every profile. It
// returns nil when no phase has samples to size from.
func CellInsights(phases []PhaseData, o InsightOptions) (*Insights, error) {
	in := &Insights{Strategy: o.Strategy, Options: o.Sizing, Load: o.Load}
	var sized []PhaseData
	for _, p := range phases {
		if len(p.Sizing) > 0 && p.Resources != nil && p.Resources.Ticks > 0 {
			sized = append(sized, p)
		}
	}
	if len(sized) == 0 {
		return nil, nil
	}
	in.LoadWorkload = loadWorkload(sized)
	in.RequestBytes = meanRequestBytes(sized, in.LoadWorkload)
	if o.Load == LoadRequests && in.LoadWorkload != "" {
		// equivalent mutant: lo >= 0; requestSizes gives a lo of 0 only with a hi of 0, and 0 > SizeSpread × 0 is false
		if lo, hi := requestSizes(sized, in.LoadWorkload); lo > 0 && hi > SizeSpread*lo {
			in.Load = LoadBytes
			in.LoadNote = fmt.Sprintf("the requests of workload %s move from %s to %s each (sent and received) in different profiles, "+
				"so the load is its bytes/s, not its requests/s", in.LoadWorkload, units.FormatBytes(lo), units.FormatBytes(hi))
		}
	}
	var profiles []SizeProfile
	for _, p := range sized {
		sp := SizeProfile{Size: p.Profile, Load: LoadText(p.Summaries)}
		for _, si := range p.Sizing {
			sz, err := Size(si, o.Strategy, o.Sizing)
			if err != nil {
				return nil, err
			}
			sp.Sizings = append(sp.Sizings, sz)
		}
		profiles = append(profiles, sp)
		in.Loads = append(in.Loads, profileLoad(p.Summaries, in.LoadWorkload, in.Load))
		in.Warnings = append(in.Warnings, phaseWarnings(p)...)
	}
	in.Sizes = TShirtSizes(profiles)
	for i, h := range JudgeHeld(sized) {
		in.Sizes[i].Held = h
	}
	in.fitScaling(sized)
	var obs []Phase
	for i, p := range sized {
		obs = append(obs, Phase{Profile: p.Profile, Resources: p.Resources, Summaries: p.Summaries, Held: in.Sizes[i].Held})
	}
	in.Observations = Observe(obs, in.Scaling)
	return in, nil
}

// fitScaling fits the P99s against the loads when two or more profiles
// have a load.
func (in *Insights) fitScaling(sized []PhaseData) {
	if len(sized) < 2 {
		return
	}
	if in.LoadWorkload == "" {
		in.Warnings = append(in.Warnings, "no workload ran in every profile: no load to fit the resources against")
		return
	}
	var points []ScalingPoint
	held := 0
	for i, p := range sized {
		switch {
		case !in.Sizes[i].Held.Fits():
			in.Warnings = append(in.Warnings, in.Sizes[i].Held.LeftOutText(p.Profile))
		case in.Loads[i] > 0:
			held++
			points = append(points, ScalingPoint{Profile: p.Profile, Load: in.Loads[i], Resources: p.Resources})
		default:
			held++
			in.Warnings = append(in.Warnings, fmt.Sprintf("profile %s has no %s of workload %s: left out of the scaling fits", p.Profile, in.Load.Unit(), in.LoadWorkload))
		}
	}
	if len(points) >= 2 {
		in.Scaling = FitScaling(in.Load.Unit(), points, FigureP99)
	} else if held < len(sized) {
		in.Warnings = append(in.Warnings, heldOf(held, len(sized))+": no scaling fits (they need 2)")
	}
}

// heldOf says how many of n profiles held their load on a machine they
// did not fill, in English at 0, 1 and more.
func heldOf(held, n int) string {
	switch held {
	case 0:
		return fmt.Sprintf("none of the %d profiles held its load on a machine it did not fill", n)
	case 1:
		return fmt.Sprintf("1 profile of %d held its load on a machine it did not fill", n)
	}
	return fmt.Sprintf("%d profiles of %d held their load on a machine they did not fill", held, n)
}

// phaseWarnings say why a phase's sizes may understate what the system
// needs.
func phaseWarnings(p PhaseData) []string {
	var out []string
	if p.State != "" && p.State != "completed" {
		out = append(out, fmt.Sprintf("profile %s did not complete (%s): its size covers only what ran", p.Profile, p.State))
	}
	if p.Resources.ClientBound || slices.ContainsFunc(p.Summaries, func(s *Summary) bool { return s.ClientBound }) {
		out = append(out, fmt.Sprintf("profile %s was client-bound: its size is for the load perflab could generate, not the load asked for", p.Profile))
	}
	return out
}

// loadWorkload is the display name of the first workload, in the order of
// the first phase, that ran in every phase.
func loadWorkload(phases []PhaseData) string {
	for _, s := range phases[0].Summaries {
		name := s.Workload.DisplayName()
		everywhere := true
		for _, p := range phases[1:] {
			everywhere = everywhere && findSummary(p.Summaries, name) != nil
		}
		if everywhere {
			return name
		}
	}
	return ""
}

func findSummary(sums []*Summary, name string) *Summary {
	for _, s := range sums {
		if s.Workload.DisplayName() == name {
			return s
		}
	}
	return nil
}

// profileLoad is the load of a profile: the named workload's achieved
// requests or bytes (sent and received) per second.
func profileLoad(sums []*Summary, name string, basis LoadBasis) float64 {
	s := findSummary(sums, name)
	if s == nil {
		return 0
	}
	if basis == LoadBytes {
		return BytesPS(s)
	}
	return s.Rate
}

// requestSizes is the smallest and the largest, over the phases, of the
// named workload's mean bytes moved per request; 0, 0 when a phase has
// no request or moved no byte.
func requestSizes(phases []PhaseData, name string) (lo, hi float64) {
	for i, p := range phases {
		s := findSummary(p.Summaries, name)
		if s == nil || s.Rate <= 0 {
			return 0, 0
		}
		per := BytesPS(s) / s.Rate
		if per <= 0 { // equivalent mutant: per < 0; a per of 0 makes lo 0, which the caller's lo > 0 refuses as it does 0, 0
			return 0, 0
		}
		if i == 0 || per < lo { // equivalent mutant: per <= lo; an equal per leaves lo as it is
			lo = per
		}
		hi = max(hi, per)
	}
	return lo, hi
}

// meanRequestBytes is the named workload's bytes (sent and received)
// over its requests, in the windows of every phase it ran in (a window of
// unknown length counts as one second).
func meanRequestBytes(phases []PhaseData, name string) float64 {
	var bytes, requests float64
	for _, p := range phases {
		if s := findSummary(p.Summaries, name); s != nil {
			secs := s.Seconds
			if secs <= 0 {
				secs = 1
			}
			bytes, requests = bytes+BytesPS(s)*secs, requests+s.Rate*secs
		}
	}
	if requests <= 0 {
		return 0
	}
	return bytes / requests
}

// LoadIn turns a load v given in basis into the unit of the fits,
// in.Load. A byte rate becomes requests/s at the load workload's mean
// bytes per request, and note says so. A rate can't become bytes/s (the
// fits follow bytes/s because the requests differ in size), nor a byte
// rate requests/s when the requests moved no bytes: then the error names
// the unit to give.
func (in *Insights) LoadIn(basis LoadBasis, v float64) (load float64, note string, err error) {
	largest := maxOf(in.Loads)
	switch {
	case basis == in.Load:
		return v, "", nil
	case basis == LoadRequests:
		why := ""
		if in.LoadNote != "" {
			why = " (" + in.LoadNote + ")"
		}
		return 0, "", fmt.Errorf("cannot predict at %s/s: the scaling fits follow the bytes/s of workload %s, not its requests/s%s; give the load as a byte rate, e.g. %s/s",
			units.Sig3(v), in.LoadWorkload, why, strings.ReplaceAll(units.FormatBytes(largest), " ", ""))
	case in.RequestBytes <= 0:
		return 0, "", fmt.Errorf("cannot predict at %s/s: the scaling fits follow the requests/s of workload %s, whose requests moved no bytes to convert a byte rate with; give the load as a rate, e.g. %s/s",
			units.FormatBytes(v), in.LoadWorkload, units.Sig3(largest))
	}
	load = v / in.RequestBytes
	note = fmt.Sprintf("%s/s is %s requests/s of workload %s: the fits follow its requests/s, and its requests moved %s each on average (sent and received) over the %d profiles measured",
		units.FormatBytes(v), units.Sig3(load), in.LoadWorkload, units.FormatBytes(in.RequestBytes), len(in.Loads))
	return load, note, nil
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// BytesPS is a workload's bytes sent and received per second over its
// window, all operations together.
func BytesPS(s *Summary) float64 {
	var b float64
	for _, op := range s.Ops {
		b += op.BytesSentPS + op.BytesRecvPS
	}
	return b
}

// BytesSentPS is a workload's bytes sent per second over its window, all
// operations together.
func BytesSentPS(s *Summary) float64 {
	var b float64
	for _, op := range s.Ops {
		b += op.BytesSentPS
	}
	return b
}

// LoadText describes the load a profile's workloads achieved: "push
// 99.8/s (1.17 MiB/s sent), query 25/s".
func LoadText(sums []*Summary) string {
	var parts []string
	for _, s := range sums {
		t := fmt.Sprintf("%s %s/s", s.Workload.DisplayName(), units.Sig3(s.Rate))
		if b := BytesSentPS(s); b >= 1 {
			t += fmt.Sprintf(" (%s/s sent)", units.FormatBytes(b))
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, ", ")
}

// ScalingPrediction is one fit's prediction at a load, with the request and
// limit the p99 rule gives for the predicted figure.
type ScalingPrediction struct {
	Scaling    Scaling
	Prediction Prediction
	Request    Quantity // predicted value × (1 + headroom), rounded up; zero without a value
	Limit      Quantity // request × limit factor, rounded up
}

// PredictAt predicts every fitted component's (and the total's) CPU and
// memory P99 at load, in the unit of in.Load. Fits that could not be made
// are left out; their warnings are in in.Scaling.
func (in *Insights) PredictAt(load float64) []ScalingPrediction {
	var out []ScalingPrediction
	for _, sc := range in.Scaling {
		if sc.Fit == nil {
			continue
		}
		sp := ScalingPrediction{Scaling: sc, Prediction: sc.Fit.Predict(load)}
		r := ResourceCPU
		if sc.Metric == MetricMemory {
			r = ResourceMemory
		}
		if v := sp.Prediction.Value; v > 0 {
			sp.Request = RoundUp(r, v*(1+in.Options.Headroom))
			sp.Limit = RoundUp(r, sp.Request.Value()*in.Options.LimitFactor)
		} else {
			sp.Prediction.Warnings = append(sp.Prediction.Warnings,
				fmt.Sprintf("the line gives %.3g at this load: no request can be derived from it", v))
		}
		out = append(out, sp)
	}
	return out
}

// Settings names the options the strategy uses, as set: "headroom 25 %,
// limit factor 1.5" for p99, "limit factor 1.5" for vpa, "" for krr.
func (in *Insights) Settings() string {
	h := fmt.Sprintf("headroom %s %%", units.Sig3(100*in.Options.Headroom))
	f := fmt.Sprintf("limit factor %s", units.Sig3(in.Options.LimitFactor))
	switch in.Strategy.Name {
	case "p99":
		if b := in.Options.Basis; b != "" && b != BasisP99 {
			return h + ", " + f + ", basis " + b
		}
		return h + ", " + f
	case "vpa":
		return f
	}
	return ""
}

// The verdicts on a scaling fit, as reports print them.
const (
	VerdictLinear    = "linear"
	VerdictConstant  = "constant"
	VerdictNotLinear = "not linear"
	VerdictUnclear   = "no clear trend"   // the slope is not significant, the figures spread too widely to call constant, and no line fits them
	VerdictTooFew    = "too few profiles" // fewer than MinFitPoints, or a line fits but too few points to tell its slope from chance
	VerdictNoFit     = "no fit"
)

// Verdict is what the fit supports saying, by the rules of Observe: linear
// (not Poor, slope significant), constant (slope not significant, spread
// at most ConstantSpread), not linear (Poor, slope significant), no clear
// trend (slope not significant, wider spread, Poor); too few profiles
// below MinFitPoints, and when the slope is not significant though a line
// fits (not Poor) and the spread is wide: with three profiles the test
// has one degree of freedom, and a line of R² 0.99 through figures that
// double is not chance the data can rule out, nor a trend it can deny.
func (s Scaling) Verdict() string {
	f := s.Fit
	switch {
	case f == nil:
		return VerdictNoFit
	case f.N < MinFitPoints:
		return VerdictTooFew
	case f.Constant:
		lo, hi, mean := spread(s.Points)
		// equivalent mutant: mean >= 0; no figure is negative, so a mean of 0 is all zeros, and 0/0 is NaN, never <= ConstantSpread
		if mean > 0 && (hi-lo)/mean <= ConstantSpread {
			return VerdictConstant
		}
		if !f.Poor {
			return VerdictTooFew
		}
		return VerdictUnclear
	case f.Poor:
		return VerdictNotLinear
	}
	return VerdictLinear
}
