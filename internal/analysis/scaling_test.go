package analysis

import (
	"math"
	"strings"
	"testing"
)

func closeTo(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// The 0.975 quantiles of Student's t, from a table, and checked in plain
// Python by bisecting a Simpson integral of the density:
//
//	pdf = lambda t, v: exp(lgamma((v+1)/2) - lgamma(v/2)) / sqrt(v*pi) * (1 + t*t/v)**(-(v+1)/2)
//	cdf(t, v) = 0.5 + Simpson(pdf, 0, t)    q(0.975, 4) = 2.7764451051978023
func TestTQuantile(t *testing.T) {
	for _, tt := range []struct{ dof, want float64 }{
		{1, 12.706204736174698}, {2, 4.302652729749464}, {3, 3.182446305284263}, {4, 2.7764451051977987},
		{5, 2.570581835636314}, {10, 2.228138851986274}, {30, 2.042272456301238}, {2.5, 3.5746548420037},
		{1e9, 1.959963984540054},
	} {
		if got := tQuantile(0.975, tt.dof); !closeTo(got, tt.want, 1e-9) {
			t.Errorf("t(0.975, %v) = %v, want %v", tt.dof, got, tt.want)
		}
	}
}

func TestFitLineExact(t *testing.T) {
	f, err := FitLine([]float64{1, 2, 3, 4}, []float64{5, 7, 9, 11}) // y = 3 + 2x
	if err != nil {
		t.Fatal(err)
	}
	if f.Intercept != 3 || f.Slope != 2 || f.R2 != 1 || f.ResidualSE != 0 || f.SlopeSE != 0 || f.Poor || f.Constant {
		t.Errorf("exact line: %+v", f)
	}
	p := f.Predict(10)
	if p.Value != 23 || p.Low != 23 || p.High != 23 || !p.Extrapolation {
		t.Errorf("prediction at 10: %+v", p)
	}
	f, _ = FitLine([]float64{1, 2, 3}, []float64{4, 4, 4})
	if f.Slope != 0 || f.R2 != 1 || !f.Constant || f.Poor {
		t.Errorf("flat line: %+v", f)
	}
}

// The references below are plain Python, with t from the table above:
//
//	n=len(xs); mx=sum(xs)/n; my=sum(ys)/n
//	sxx=Σ(x-mx)²; sxy=Σ(x-mx)(y-my); syy=Σ(y-my)²
//	b=sxy/sxx; a=my-b*mx; sse=Σ(y-a-b*x)²; r2=1-sse/syy; s=sqrt(sse/(n-2))
//	seb=s/sqrt(sxx); sea=s*sqrt(1/n+mx²/sxx)
//	yhat=a+b*x0; half=t*s*sqrt(1+1/n+(x0-mx)²/sxx)
func TestFitLineNoisy(t *testing.T) {
	tests := []struct {
		name                         string
		xs, ys                       []float64
		a, b, r2, s, sea, seb        float64
		x0, yhat, lo, hi             float64
		poor, constant, extrapolated bool
	}{
		// fit([1..6], [2.1, 3.9, 6.2, 7.8, 10.1, 12.2], t=2.7764451051977987, x0=8)
		{"linear", []float64{1, 2, 3, 4, 5, 6}, []float64{2.1, 3.9, 6.2, 7.8, 10.1, 12.2},
			-0.019999999999998685, 2.0199999999999996, 0.9982106661074999, 0.1788854381999833, 0.16653327995729073, 0.042761798705987925,
			8, 16.139999999999997, 15.382880653099512, 16.89711934690048, false, false, true},
		// fit([100, 200, 400, 800, 1600], [1.31, 1.29, 1.30, 1.32, 1.28], t=3.182446305284263, x0=1000): t of the slope = -0.85
		{"constant", []float64{100, 200, 400, 800, 1600}, []float64{1.31, 1.29, 1.30, 1.32, 1.28},
			1.3070833333333336, -1.1424731182795708e-05, 0.19422043010752688, 0.016388812951649616, 0.011095278818799728, 1.3435258689403104e-05,
			1000, 1.2956586021505379, 1.2362586941433058, 1.35505851015777, true, true, false},
	}
	for _, tt := range tests {
		f, err := FitLine(tt.xs, tt.ys)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"a", f.Intercept, tt.a}, {"b", f.Slope, tt.b}, {"R²", f.R2, tt.r2}, {"s", f.ResidualSE, tt.s},
			{"SE(a)", f.InterceptSE, tt.sea}, {"SE(b)", f.SlopeSE, tt.seb}} {
			if !closeTo(c.got, c.want, 1e-9) {
				t.Errorf("%s: %s = %v, want %v", tt.name, c.what, c.got, c.want)
			}
		}
		if f.Poor != tt.poor || f.Constant != tt.constant {
			t.Errorf("%s: poor %v, constant %v; notes %q", tt.name, f.Poor, f.Constant, f.Notes)
		}
		p := f.Predict(tt.x0)
		if !closeTo(p.Value, tt.yhat, 1e-9) || !closeTo(p.Low, tt.lo, 1e-9) || !closeTo(p.High, tt.hi, 1e-9) || p.Extrapolation != tt.extrapolated {
			t.Errorf("%s: prediction at %v = %+v, want %v in [%v, %v]", tt.name, tt.x0, p, tt.yhat, tt.lo, tt.hi)
		}
	}
}

func TestFitLineLimits(t *testing.T) {
	if _, err := FitLine([]float64{1}, []float64{1}); err == nil {
		t.Error("one point fitted")
	}
	if _, err := FitLine([]float64{2, 2, 2}, []float64{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "same load") {
		t.Errorf("one load: %v", err)
	}
	if _, err := FitLine([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("mismatched lengths fitted")
	}
	f, err := FitLine([]float64{1, 2}, []float64{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Poor || f.Constant || !math.IsNaN(f.SlopeSE) || !strings.Contains(f.Notes[0], "2 points") {
		t.Errorf("two points: %+v", f)
	}
	p := f.Predict(1.5)
	if p.Value != 2 || !math.IsNaN(p.Low) || p.Extrapolation || len(p.Warnings) != 1 {
		t.Errorf("two-point prediction: %+v", p)
	}
}

// profileResources is a phase in which component "ing" used cpu cores and
// mem bytes (P99), "qf" 0.1 cores and 1 GiB, the generator 0.5 cores, and
// the totals (both ways) the sums of ing and qf.
func profileResources(cpu, mem float64) *Resources {
	st := func(v float64) Stat { return Stat{N: 100, P99: v, Max: v, Avg: v} }
	return &Resources{
		Components: []ComponentResources{
			{Component: Component{Name: "ing"}, CPU: st(cpu), Memory: st(mem)},
			{Component: Component{Name: "qf"}, CPU: st(0.1), Memory: st(1 << 30)},
			{Component: Component{Name: "perflab", Kind: KindGenerator}, CPU: st(0.5), Memory: st(1 << 20)},
		},
		CPU:    Total{Components: 2, Sum: st(cpu + 0.1), Summed: st(cpu + 0.1)},
		Memory: Total{Components: 2, Sum: st(mem + 1<<30), Summed: st(mem + 1<<30)},
	}
}

func TestFitScaling(t *testing.T) {
	points := []ScalingPoint{
		{"pico", 100, profileResources(0.5, 2e9)},
		{"small", 200, profileResources(1.0, 3e9)},
		{"medium", 400, profileResources(2.0, 5e9)},
	}
	few := profileResources(4, 9e9)
	few.Components[1].CPU = Stat{N: 5, Max: 0.1, Avg: 0.1}
	points = append(points, ScalingPoint{"large", 800, few})
	got := FitScaling("requests/s", points, FigureP99)
	if len(got) != 6 {
		t.Fatalf("%d fits, want ing, qf and total for cpu and memory", len(got))
	}
	ing, qf, total := got[0], got[1], got[2]
	if ing.Component != "ing" || ing.Metric != MetricCPU || ing.LoadUnit != "requests/s" || ing.Fit == nil || len(ing.Points) != 4 {
		t.Fatalf("ing cpu: %+v", ing)
	}
	if !closeTo(ing.Fit.Slope, 0.005, 1e-12) || !closeTo(ing.Fit.Intercept, 0, 1e-9) || ing.Fit.Poor || ing.Fit.Constant {
		t.Errorf("ing cpu fit %+v", ing.Fit)
	}
	if qf.Fit == nil || !qf.Fit.Constant || len(qf.Points) != 3 {
		t.Errorf("qf cpu: %+v", qf)
	}
	checkWarnings(t, "qf cpu", qf.Warnings, []string{"profile large has no cpu P99 of qf (5 samples): left out of the fit"})
	if total.Component != TotalComponent || !closeTo(total.Fit.Intercept, 0.1, 1e-9) {
		t.Errorf("total cpu: %+v", total.Fit)
	}
	if mem := got[3]; mem.Metric != MetricMemory || !closeTo(mem.Fit.Slope, 1e7, 1e-9) || !closeTo(mem.Fit.Intercept, 1e9, 1e-9) {
		t.Errorf("ing memory fit %+v", mem.Fit)
	}
}

// TestScalingVerdicts: each verdict of a fit, next to the figures that
// would make it wrong. Three profiles whose CPU lies on a line of R² 0.99
// (the demo's 0.06, 0.14 and 0.20 cores at 200, 600 and 1000 requests/s)
// were "no clear trend"; they are too few profiles to tell, and a fourth
// makes them linear.
func TestScalingVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   string
	}{
		{"two profiles", []float64{1, 2}, []float64{1, 2}, VerdictTooFew},
		{"three on a line, one degree of freedom", []float64{200, 600, 1000}, []float64{0.06, 0.14, 0.20}, VerdictTooFew},
		{"four on a line", []float64{200, 600, 1000, 1400}, []float64{0.06, 0.14, 0.20, 0.29}, VerdictLinear},
		// issue 18: a falling line is as significant as a rising one (|t|, not t).
		{"four on a falling line", []float64{200, 600, 1000, 1400}, []float64{0.29, 0.20, 0.14, 0.06}, VerdictLinear},
		{"flat within 20 %", []float64{1, 2, 3, 4}, []float64{1.0, 1.05, 0.97, 1.02}, VerdictConstant},
		{"flat, three profiles", []float64{1, 2, 3}, []float64{1.0, 1.05, 0.97}, VerdictConstant},
		{"scattered", []float64{1, 2, 3, 4}, []float64{1, 3, 1, 3}, VerdictUnclear},
		{"a step", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 10, 10, 10}, VerdictNotLinear},
	} {
		f, err := FitLine(tc.xs, tc.ys)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sc := Scaling{Fit: &f}
		for i := range tc.xs {
			sc.Points = append(sc.Points, ScalingValue{Load: tc.xs[i], Value: tc.ys[i]})
		}
		if got := sc.Verdict(); got != tc.want {
			t.Errorf("%s: %q, want %q (R² %.3f, slope %.3g ± %.3g, notes %q)", tc.name, got, tc.want, f.R2, f.Slope, f.SlopeSE, f.Notes)
		}
	}
}

// TestFitNotesSayWhy (issue 18): the notes of a slope not significantly
// different from 0 give its t, the critical value, the confidence and the
// degrees of freedom, and say "too few points" only of a line that fits.
func TestFitNotesSayWhy(t *testing.T) {
	flat, err := FitLine([]float64{100, 200, 400, 800, 1600}, []float64{1.31, 1.29, 1.30, 1.32, 1.28})
	if err != nil {
		t.Fatal(err)
	}
	want := "the slope is not significantly different from 0 (t = -0.85, |t| < 3.18 at 95 %, 3 degrees of freedom)"
	if len(flat.Notes) != 2 || flat.Notes[1] != want {
		t.Errorf("scattered flat figures: notes %q, want R² and %q", flat.Notes, want)
	}
	few, err := FitLine([]float64{200, 600, 1000}, []float64{0.06, 0.14, 0.20})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(few.Notes); n != 2 || !strings.HasPrefix(few.Notes[1], "a line fits (R² 0.99), but 3 points are too few") {
		t.Errorf("three on a line: notes %q", few.Notes)
	}
}

// TestPredictAtTheEdgesOfTheRange (issue 18): a prediction at the lowest or
// the highest load fitted is not an extrapolation.
func TestPredictAtTheEdgesOfTheRange(t *testing.T) {
	f, err := FitLine([]float64{1, 2, 3, 4, 5, 6}, []float64{2.1, 3.9, 6.2, 7.8, 10.1, 12.2})
	if err != nil {
		t.Fatal(err)
	}
	for _, load := range []float64{1, 6} {
		if p := f.Predict(load); p.Extrapolation || len(p.Warnings) != 0 {
			t.Errorf("at %v: extrapolation %v, warnings %q", load, p.Extrapolation, p.Warnings)
		}
	}
}
