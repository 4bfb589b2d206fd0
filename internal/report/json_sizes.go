package report

import (
	"math"

	"github.com/perflab/perflab/internal/analysis"
)

// jsonInsights is a cell's suggested sizes, scaling fits and observations.
type jsonInsights struct {
	Strategy     string            `json:"strategy"`
	Rule         string            `json:"rule"`
	Headroom     float64           `json:"headroom"`
	LimitFactor  float64           `json:"limit_factor"`
	Sizes        []jsonSize        `json:"sizes"`
	Scaling      *jsonScaling      `json:"scaling"`
	Observations []jsonObservation `json:"observations"`
	Warnings     []string          `json:"warnings"`
}

type jsonSize struct {
	Size       string        `json:"size"`
	Load       string        `json:"load"`
	LoadValue  float64       `json:"load_value"`
	Components []jsonSizeRow `json:"components"`
	Total      jsonSizeRow   `json:"total"`
	YAML       string        `json:"yaml"`
	Warnings   []string      `json:"warnings"`
	// Sustained is false when the system did not hold the profile's load
	// (analysis.Held), SustainedWhy then says why; a machine-bound or
	// client-bound profile says so beside it.
	Sustained    bool   `json:"sustained"`
	SustainedWhy string `json:"sustained_why,omitempty"`
	MachineBound bool   `json:"machine_bound,omitempty"`
	MachineWhy   string `json:"machine_bound_reason,omitempty"`
	MachineBusy  bool   `json:"machine_busy,omitempty"`
	BusyWhy      string `json:"machine_busy_reason,omitempty"`
	ClientBound  bool   `json:"client_bound,omitempty"`
	// Verified is perflab size --verify's verdict on the size, when it ran.
	Verified *jsonVerified `json:"verified,omitempty"`
	// LimitCurves are perflab size --search-limits' curves of the size,
	// CPU first.
	LimitCurves []*analysis.LimitCurve `json:"limit_curves,omitempty"`
}

// jsonVerified is a size's verdict: whether it holds, why not, and what
// it rests on.
type jsonVerified struct {
	Holds        bool                       `json:"holds"`
	Inconclusive bool                       `json:"inconclusive,omitempty"`
	Reasons      []string                   `json:"reasons"`
	Load         string                     `json:"load"`
	Tolerance    float64                    `json:"tolerance"`
	Latency      []analysis.VerifiedLatency `json:"latency"`
	Evidence     []jsonEvidence             `json:"evidence"`
	Run          string                     `json:"run"`
}

type jsonEvidence struct {
	Component        string  `json:"component"`
	CPULimitCores    float64 `json:"cpu_limit_cores,omitempty"`
	MemoryLimitBytes float64 `json:"memory_limit_bytes,omitempty"`
	Periods          uint64  `json:"periods"`
	ThrottledPeriods uint64  `json:"throttled_periods"`
	ThrottledShare   float64 `json:"throttled_share"`
	StalledSeconds   float64 `json:"stalled_seconds"`
	MemoryPeakBytes  int64   `json:"memory_peak_bytes"` // -1 when the kernel gives none
	OOMKills         uint64  `json:"oom_kills"`
	Ended            string  `json:"ended,omitempty"`
	GCPerMin         float64 `json:"gc_per_min,omitempty"`
	GCPerMinBefore   float64 `json:"gc_per_min_unconfined,omitempty"`
}

func toJSONVerified(v *analysis.Verified) *jsonVerified {
	if v == nil {
		return nil
	}
	j := &jsonVerified{Holds: v.Holds, Inconclusive: v.Inconclusive, Reasons: append([]string{}, v.Reasons...), Load: v.Load, Tolerance: v.Tolerance,
		Latency: v.Latency, Evidence: []jsonEvidence{}, Run: v.Run}
	for _, c := range v.Components {
		j.Evidence = append(j.Evidence, jsonEvidence{Component: c.Component, CPULimitCores: c.CPULimit.Value(),
			MemoryLimitBytes: c.MemoryLimit.Value(), Periods: c.Periods, ThrottledPeriods: c.Throttled,
			ThrottledShare: round6(c.ThrottledShare()), StalledSeconds: round6(c.Stalled.Seconds()), MemoryPeakBytes: c.MemoryPeak,
			OOMKills: c.OOMKills, Ended: c.Ended, GCPerMin: round6(c.GCPerMin), GCPerMinBefore: round6(c.GCPerMinBefore)})
	}
	return j
}

// jsonSizeRow gives each quantity as a manifest writes it ("" when the data
// can't support it) and in cores or bytes (0 then).
type jsonSizeRow struct {
	Component          string  `json:"component"`
	CPURequest         string  `json:"cpu_request"`
	CPURequestCores    float64 `json:"cpu_request_cores"`
	CPULimit           string  `json:"cpu_limit"`
	CPULimitCores      float64 `json:"cpu_limit_cores"`
	NoCPULimit         bool    `json:"no_cpu_limit"`
	MemoryRequest      string  `json:"memory_request"`
	MemoryRequestBytes float64 `json:"memory_request_bytes"`
	MemoryLimit        string  `json:"memory_limit"`
	MemoryLimitBytes   float64 `json:"memory_limit_bytes"`
	// The VPA recommender's bounds, with the vpa strategy only.
	CPULowerBound         string  `json:"cpu_lower_bound,omitempty"`
	CPULowerBoundCores    float64 `json:"cpu_lower_bound_cores,omitempty"`
	CPUUpperBound         string  `json:"cpu_upper_bound,omitempty"`
	CPUUpperBoundCores    float64 `json:"cpu_upper_bound_cores,omitempty"`
	MemoryLowerBound      string  `json:"memory_lower_bound,omitempty"`
	MemoryLowerBoundBytes float64 `json:"memory_lower_bound_bytes,omitempty"`
	MemoryUpperBound      string  `json:"memory_upper_bound,omitempty"`
	MemoryUpperBoundBytes float64 `json:"memory_upper_bound_bytes,omitempty"`
}

type jsonScaling struct {
	LoadWorkload string    `json:"load_workload"`
	LoadUnit     string    `json:"load_unit"`
	LoadNote     string    `json:"load_note,omitempty"` // why the unit is bytes/s
	Figure       string    `json:"figure"`
	Fits         []jsonFit `json:"fits"`
}

// jsonFit is one fit; the standard errors are null with fewer than three
// points, and the line's figures null when there is no fit.
type jsonFit struct {
	Component   string             `json:"component"`
	Metric      string             `json:"metric"`
	Points      []jsonScalingPoint `json:"points"`
	Intercept   *float64           `json:"intercept"`
	Slope       *float64           `json:"slope"`
	InterceptSE *float64           `json:"intercept_se"`
	SlopeSE     *float64           `json:"slope_se"`
	R2          *float64           `json:"r2"`
	Verdict     string             `json:"verdict"`
	Notes       []string           `json:"notes"`
	Warnings    []string           `json:"warnings"`
}

type jsonScalingPoint struct {
	Profile string  `json:"profile"`
	Load    float64 `json:"load"`
	Value   float64 `json:"value"`
}

type jsonObservation struct {
	Kind      string          `json:"kind"`
	Component string          `json:"component"`
	Metric    string          `json:"metric"`
	Text      string          `json:"text"`
	Figures   []jsonObsFigure `json:"figures"`
}

type jsonObsFigure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

func toJSONInsights(in *analysis.Insights) *jsonInsights {
	if in == nil {
		return nil
	}
	j := &jsonInsights{Strategy: in.Strategy.Name, Rule: in.Strategy.Doc, Headroom: in.Options.Headroom,
		LimitFactor: in.Options.LimitFactor, Sizes: []jsonSize{}, Observations: []jsonObservation{},
		Warnings: append([]string{}, in.Warnings...)}
	for i, t := range in.Sizes {
		js := jsonSize{Size: t.Size, Load: t.Load, LoadValue: round6(in.Loads[i]), Components: []jsonSizeRow{},
			Total: toJSONSizeRow(t.Total), Warnings: append([]string{}, t.Warnings...),
			Sustained: t.Held.Sustained(), SustainedWhy: t.Held.Why(), MachineBound: t.Held.MachineBound != "",
			MachineWhy: t.Held.MachineBound, MachineBusy: t.Held.MachineBusy != "", BusyWhy: t.Held.MachineBusy, ClientBound: t.Held.ClientBound,
			Verified: toJSONVerified(t.Verified), LimitCurves: t.Curves}
		for _, r := range t.Components {
			js.Components = append(js.Components, toJSONSizeRow(r))
		}
		if y, err := t.YAML(); err == nil {
			js.YAML = string(y)
		}
		j.Sizes = append(j.Sizes, js)
	}
	if in.Scaling != nil {
		j.Scaling = &jsonScaling{LoadWorkload: in.LoadWorkload, LoadUnit: in.Load.Unit(), LoadNote: in.LoadNote, Figure: string(analysis.FigureP99), Fits: []jsonFit{}}
		for _, sc := range in.Scaling {
			j.Scaling.Fits = append(j.Scaling.Fits, toJSONFit(sc))
		}
	}
	for _, o := range in.Observations {
		jo := jsonObservation{Kind: o.Kind, Component: o.Component, Metric: o.Metric, Text: o.Text, Figures: []jsonObsFigure{}}
		for _, f := range o.Figures {
			jo.Figures = append(jo.Figures, jsonObsFigure{Name: f.Name, Value: round6(f.Value), Unit: f.Unit})
		}
		j.Observations = append(j.Observations, jo)
	}
	return j
}

func toJSONSizeRow(r analysis.TShirtRow) jsonSizeRow {
	return jsonSizeRow{Component: r.Component, CPURequest: r.CPURequest.String(), CPURequestCores: r.CPURequest.Value(),
		CPULimit: r.CPULimit.String(), CPULimitCores: r.CPULimit.Value(), NoCPULimit: r.NoCPULimit,
		MemoryRequest: r.MemoryRequest.String(), MemoryRequestBytes: r.MemoryRequest.Value(),
		MemoryLimit: r.MemoryLimit.String(), MemoryLimitBytes: r.MemoryLimit.Value(),
		CPULowerBound: r.CPULower.String(), CPULowerBoundCores: r.CPULower.Value(),
		CPUUpperBound: r.CPUUpper.String(), CPUUpperBoundCores: r.CPUUpper.Value(),
		MemoryLowerBound: r.MemoryLower.String(), MemoryLowerBoundBytes: r.MemoryLower.Value(),
		MemoryUpperBound: r.MemoryUpper.String(), MemoryUpperBoundBytes: r.MemoryUpper.Value()}
}

func toJSONFit(sc analysis.Scaling) jsonFit {
	jf := jsonFit{Component: sc.Component, Metric: sc.Metric, Points: []jsonScalingPoint{}, Verdict: sc.Verdict(),
		Notes: []string{}, Warnings: append([]string{}, sc.Warnings...)}
	for _, p := range sc.Points {
		jf.Points = append(jf.Points, jsonScalingPoint{Profile: p.Profile, Load: round6(p.Load), Value: round6(p.Value)})
	}
	if f := sc.Fit; f != nil {
		jf.Intercept, jf.Slope, jf.R2 = optFloat(f.Intercept), optFloat(f.Slope), optFloat(f.R2)
		jf.InterceptSE, jf.SlopeSE = optFloat(f.InterceptSE), optFloat(f.SlopeSE)
		jf.Notes = append(jf.Notes, f.Notes...)
	}
	return jf
}

// optFloat is v rounded for the summary, or nil for NaN and ±Inf, which
// JSON cannot hold.
func optFloat(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	r := round6(v)
	return &r
}
