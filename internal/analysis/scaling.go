package analysis

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// The rules a fit is judged by.
const (
	// PoorFitR2 is the R² below which a straight line does not describe
	// how a resource follows load.
	PoorFitR2 = 0.9
	// MinFitPoints is the fewest points a fit has standard errors, tests
	// and prediction intervals for: with two points the line passes through
	// both and nothing is left to estimate the scatter from.
	MinFitPoints = 3
	// FitConfidence is the level of the slope test and prediction intervals.
	FitConfidence = 0.95
)

// Fit is an ordinary least-squares line resource = Intercept + Slope × load.
//
// Poor is set when R² < PoorFitR2 or there are fewer than MinFitPoints
// points. Constant is set when the slope is not significantly different
// from 0: a two-sided Student-t test at 95 % (|Slope / SlopeSE| below the
// 0.975 quantile of t with N − 2 degrees of freedom). A constant resource
// usually has a Poor fit too — the load explains none of its small scatter —
// and then Constant, not Poor, is the verdict to report. Fewer than
// MinFitPoints points leave the standard errors NaN and Constant false.
type Fit struct {
	N                int
	Intercept, Slope float64
	InterceptSE      float64 // NaN when N < MinFitPoints
	SlopeSE          float64
	ResidualSE       float64 // √(SSE / (N − 2)); NaN when N < MinFitPoints
	R2               float64 // 1 − SSE/SST; 1 when every point lies on the line, SST = 0 included
	LoadMin, LoadMax float64
	Poor             bool
	Constant         bool
	Notes            []string // why the fit is poor, and what the test found

	meanLoad, sxx float64
}

// tQuantile is the p quantile (0.5 < p < 1) of Student's t with dof > 0
// degrees of freedom, from the inverse regularized incomplete beta function
// as gonum's distuv.StudentsT computes it (without distuv's matrix
// dependencies): 1 − p = ½ I_x(dof/2, ½) with x = dof / (dof + t²). Beyond
// 1e7 degrees of freedom it is the normal quantile.
func tQuantile(p, dof float64) float64 {
	if dof > 1e7 { // equivalent mutant: >=; at 1e7 the t and normal quantiles agree to 7 digits
		return math.Sqrt2 * math.Erfinv(2*p-1)
	}
	x := mathext.InvRegIncBeta(dof/2, 0.5, 2*(1-p))
	return math.Sqrt(dof * (1 - x) / x)
}

// FitLine fits y = a + b × x by ordinary least squares. It needs at least
// two points of different x.
func FitLine(xs, ys []float64) (Fit, error) {
	if len(xs) != len(ys) {
		return Fit{}, fmt.Errorf("cannot fit a line: %d loads for %d values", len(xs), len(ys))
	}
	f := Fit{N: len(xs), InterceptSE: math.NaN(), SlopeSE: math.NaN(), ResidualSE: math.NaN()}
	if f.N < 2 {
		return Fit{}, errors.New("cannot fit a line: fewer than 2 points")
	}
	var sx, sy float64
	f.LoadMin, f.LoadMax = xs[0], xs[0]
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
		f.LoadMin, f.LoadMax = min(f.LoadMin, xs[i]), max(f.LoadMax, xs[i])
	}
	n := float64(f.N)
	mx, my := sx/n, sy/n
	var sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		f.sxx, sxy, syy = f.sxx+dx*dx, sxy+dx*dy, syy+dy*dy
	}
	if f.sxx == 0 {
		return Fit{}, errors.New("cannot fit a line: every point has the same load")
	}
	f.meanLoad = mx
	f.Slope = sxy / f.sxx
	f.Intercept = my - f.Slope*mx
	var sse float64
	for i := range xs {
		r := ys[i] - f.Intercept - f.Slope*xs[i]
		sse += r * r
	}
	f.R2 = 1
	if syy > 0 {
		f.R2 = max(0, 1-sse/syy)
	}
	f.judge(sse)
	return f, nil
}

func (f *Fit) judge(sse float64) {
	if f.N < MinFitPoints {
		f.Poor = true
		f.Notes = append(f.Notes, fmt.Sprintf("%d points: a line through them says nothing of the scatter (a fit needs at least %d)", f.N, MinFitPoints))
		return
	}
	dof := float64(f.N - 2)
	f.ResidualSE = math.Sqrt(sse / dof)
	f.SlopeSE = f.ResidualSE / math.Sqrt(f.sxx)
	f.InterceptSE = f.ResidualSE * math.Sqrt(1/float64(f.N)+f.meanLoad*f.meanLoad/f.sxx)
	// Equivalent mutants here and below (< made <=, >= made >): R² and t
	// are computed floats, equal to their thresholds only for a contrived input.
	if f.R2 < PoorFitR2 {
		f.Poor = true
		f.Notes = append(f.Notes, fmt.Sprintf("R² %.2f is below %.2f: a straight line does not describe it", f.R2, PoorFitR2))
	}
	crit := tQuantile(1-(1-FitConfidence)/2, dof)
	switch {
	case f.SlopeSE == 0:
		f.Constant = f.Slope == 0
	default:
		tv := f.Slope / f.SlopeSE
		f.Constant = math.Abs(tv) < crit // equivalent mutant: <=, as above
		if f.Constant {
			f.Notes = append(f.Notes, fmt.Sprintf("the slope is not significantly different from 0 (t = %.2f, |t| < %.2f at %.0f %%, %d degrees of freedom)",
				tv, crit, 100*FitConfidence, f.N-2))
			if f.R2 >= PoorFitR2 { // equivalent mutant: >, as above
				f.Notes = append(f.Notes, fmt.Sprintf("a line fits (R² %.2f), but %d points are too few to tell its slope from chance: run more profiles", f.R2, f.N))
			}
		}
	}
}

// Prediction is a fit's value at one load with its 95 % prediction
// interval: where a new measurement at that load is expected to fall.
type Prediction struct {
	Load          float64
	Value         float64
	Low, High     float64 // NaN when the fit has fewer than MinFitPoints points
	Extrapolation bool    // Load is outside the loads the line was fitted on
	Warnings      []string
}

// Predict is the fit's value at load with the 95 % prediction interval
// Value ± t(0.975, N − 2) × ResidualSE × √(1 + 1/N + (load − mean load)² / Sxx).
func (f Fit) Predict(load float64) Prediction {
	p := Prediction{Load: load, Value: f.Intercept + f.Slope*load, Low: math.NaN(), High: math.NaN()}
	if load < f.LoadMin || load > f.LoadMax {
		p.Extrapolation = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("load %.4g is outside the fitted range %.4g–%.4g: the line is extrapolated, and the interval assumes it stays straight",
			load, f.LoadMin, f.LoadMax))
	}
	if f.N < MinFitPoints {
		p.Warnings = append(p.Warnings, fmt.Sprintf("no prediction interval: the fit has %d points (needs at least %d)", f.N, MinFitPoints))
		return p
	}
	if f.Poor {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the fit is poor (R² %.2f): the prediction may be far off", f.R2))
	}
	d := load - f.meanLoad
	half := tQuantile(1-(1-FitConfidence)/2, float64(f.N-2)) * f.ResidualSE * math.Sqrt(1+1/float64(f.N)+d*d/f.sxx)
	p.Low, p.High = p.Value-half, p.Value+half
	return p
}

// StatFigure picks which of a Stat's figures a scaling fit follows.
type StatFigure string

// The figures a scaling fit can follow.
const (
	FigureP99 StatFigure = "P99"
	FigureAvg StatFigure = "Avg"
	FigureMax StatFigure = "Max"
)

// of is the figure of s, and whether s supports it.
func (f StatFigure) of(s Stat) (float64, bool) {
	switch f {
	case FigureP99:
		return s.P99, s.HasP99()
	case FigureAvg:
		return s.Avg, s.N > 0
	case FigureMax:
		return s.Max, s.N > 0
	}
	return 0, false
}

// The metrics scaling fits follow, with their units.
const (
	MetricCPU    = "cpu"    // cores
	MetricMemory = "memory" // bytes
)

// ScalingPoint is one profile's load and resource figures.
type ScalingPoint struct {
	Profile   string
	Load      float64 // in the LoadUnit passed to FitScaling
	Resources *Resources
}

// ScalingValue is one point of a fit: a profile's load and figure.
type ScalingValue struct {
	Profile string
	Load    float64
	Value   float64 // cores or bytes
}

// Scaling is how one component's (or the total's) CPU or memory follows
// load across profiles.
type Scaling struct {
	Component string // TotalComponent: the figure of the summed series
	Metric    string // MetricCPU or MetricMemory
	Figure    StatFigure
	LoadUnit  string // e.g. "requests/s", "samples/s", "MB/s", "active series"
	Points    []ScalingValue
	Fit       *Fit // nil when there are too few points with the figure, or all at one load
	Warnings  []string
}

// FitScaling fits resource = a + b × load for every component of the system
// under test (not the generator) and for the total, for CPU and memory,
// across the profiles in points. A profile where a component's figure is
// missing (e.g. no P99 for too few samples) is left out of that fit with a
// warning.
func FitScaling(loadUnit string, points []ScalingPoint, figure StatFigure) []Scaling {
	var names []string
	seen := map[string]bool{}
	for _, p := range points {
		for _, c := range p.Resources.Components {
			if c.Kind != KindGenerator && !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	names = append(names, TotalComponent)
	var out []Scaling
	for _, metric := range []string{MetricCPU, MetricMemory} {
		for _, name := range names {
			out = append(out, fitOne(loadUnit, points, figure, name, metric))
		}
	}
	return out
}

func fitOne(loadUnit string, points []ScalingPoint, figure StatFigure, name, metric string) Scaling {
	sc := Scaling{Component: name, Metric: metric, Figure: figure, LoadUnit: loadUnit}
	var xs, ys []float64
	for _, p := range points {
		s := statFor(p.Resources, name, metric)
		v, ok := figure.of(s)
		if !ok {
			sc.Warnings = append(sc.Warnings, fmt.Sprintf("profile %s has no %s %s of %s (%d samples): left out of the fit", p.Profile, metric, figure, name, s.N))
			continue
		}
		sc.Points = append(sc.Points, ScalingValue{Profile: p.Profile, Load: p.Load, Value: v})
		xs, ys = append(xs, p.Load), append(ys, v)
	}
	f, err := FitLine(xs, ys)
	if err != nil {
		sc.Warnings = append(sc.Warnings, fmt.Sprintf("no fit of %s %s: %v", name, metric, err))
		return sc
	}
	sc.Fit = &f
	return sc
}

// statFor is a component's (or the summed series') Stat of the metric.
func statFor(r *Resources, name, metric string) Stat {
	if name == TotalComponent {
		if metric == MetricCPU {
			return r.CPU.Summed
		}
		return r.Memory.Summed
	}
	for _, c := range r.Components {
		if c.Name == name {
			if metric == MetricCPU {
				return c.CPU
			}
			return c.Memory
		}
	}
	return Stat{}
}
