package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestObserve(t *testing.T) {
	loads := []float64{100, 200, 400, 800}
	var phases []Phase
	var points []ScalingPoint
	for i, name := range []string{"pico", "small", "medium", "large"} {
		// ing: CPU 0.005 cores and memory 1 GB + 10 MB per request/s; qf
		// constant at 0.1 cores and 1 GiB.
		r := profileResources(0.005*loads[i], 1e9+1e7*loads[i])
		phases = append(phases, Phase{Profile: name, Resources: r})
		points = append(points, ScalingPoint{Profile: name, Load: loads[i], Resources: r})
	}
	bound := profileResources(1, 2e9)
	bound.ClientBound, bound.GeneratorCPU, bound.CoresAvailable = true, 0.5, 0.5
	phases = append(phases, Phase{Profile: "overload", Resources: bound})
	obs := Observe(phases, FitScaling("requests/s", points, FigureP99))
	// memory shares of ing: 2/3.07, 3/4.07, 5/6.07 and 9/10.07 GB: 65–89 %;
	// CPU shares 0.5/0.6 … 4/4.1: 83–98 %; in overload 1/1.1 and 2/3.07.
	want := []struct{ kind, text string }{
		{ObsClientBound, "in overload the generator was the limit (client-bound): its CPU P99 was 0.5 of 0.5 cores"},
		{ObsShare, "ing accounts for 65–89 % of memory across 5 profiles (of the sum of the components' P99s)"},
		{ObsShare, "ing accounts for 83–98 % of CPU across 5 profiles"},
		{ObsLinear, "ing CPU scales linearly with load in requests/s (R² 1.00 over 4 profiles)"},
		{ObsLinear, "CPU scales linearly with load in requests/s (R² 1.00 over 4 profiles)"},
		{ObsLinear, "ing memory scales linearly with load in requests/s"},
		{ObsLinear, "memory scales linearly with load in requests/s"},
		{ObsConstant, "qf CPU is constant across load: 0.1 cores in all 4 profiles"},
		{ObsConstant, "qf memory is constant across load: 1 GiB in all 4 profiles"},
	}
	if len(obs) != len(want) {
		for _, o := range obs {
			t.Logf("%s: %s", o.Kind, o.Text)
		}
		t.Fatalf("%d observations, want %d", len(obs), len(want))
	}
	for i, w := range want {
		if obs[i].Kind != w.kind || !strings.Contains(obs[i].Text, w.text) {
			t.Errorf("observation %d: %s %q, want %s %q", i, obs[i].Kind, obs[i].Text, w.kind, w.text)
		}
	}
	if f := obs[1].Figures; len(f) != 5 || f[0].Name != "share in pico" || !closeTo(f[0].Value, 2e9/(2e9+1<<30), 1e-12) {
		t.Errorf("share figures %+v", f)
	}
	if f := obs[3].Figures; f[1].Name != "slope" || !closeTo(f[1].Value, 0.005, 1e-12) || f[1].Unit != "cores per requests/s" {
		t.Errorf("linear figures %+v", f)
	}
}

func TestObserveSaysNothingUnsupported(t *testing.T) {
	// Two profiles: no fit is judged; shares differ in who leads.
	a, b := profileResources(0.05, 1e8), profileResources(2, 5e9)
	phases := []Phase{{Profile: "a", Resources: a}, {Profile: "b", Resources: b}}
	obs := Observe(phases, FitScaling("MB/s", []ScalingPoint{{"a", 1, a}, {"b", 2, b}}, FigureP99))
	if len(obs) != 0 {
		t.Errorf("observations from two profiles with different leaders: %+v", obs)
	}
	// A noisy resource with no significant slope is not called constant.
	noisy := fitted(t, "c", MetricMemory, 6e9, 14e9, 7e9, 12e9)
	if !noisy.Fit.Constant {
		t.Fatalf("fixture: slope significant %+v", noisy.Fit)
	}
	if obs := Observe(nil, []Scaling{noisy}); len(obs) != 0 {
		t.Errorf("observations from noise: %+v", obs)
	}
}

// fitted is a Scaling of the points (load i+1, ys[i]).
func fitted(t *testing.T, component, metric string, ys ...float64) Scaling {
	t.Helper()
	sc := Scaling{Component: component, Metric: metric, LoadUnit: "MB/s"}
	var xs []float64
	for i, y := range ys {
		xs = append(xs, float64(i+1))
		sc.Points = append(sc.Points, ScalingValue{Profile: string(rune('a' + i)), Load: float64(i + 1), Value: y})
	}
	f, err := FitLine(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	sc.Fit = &f
	return sc
}

func TestObserveConstantWithScatter(t *testing.T) {
	// 1.28–1.32 GB: Sxx 5, Sxy 0.02e9, so b = 0.004e9 per MB/s, SSE 0.00072e18,
	// SE(b) = √(0.00072/2/5) e9 = 0.0085e9, t = 0.47 < 4.30; spread 3 %.
	sc := fitted(t, "query-frontend", MetricMemory, 1.30e9, 1.28e9, 1.32e9, 1.30e9)
	obs := Observe(nil, []Scaling{sc})
	if len(obs) != 1 || obs[0].Text != "query-frontend memory is constant across load: 1.21 GiB on average (1.19 GiB to 1.23 GiB over 4 profiles)" {
		t.Errorf("observations %+v", obs)
	}
}

func TestObserveNotLinear(t *testing.T) {
	// A step: x̄ 4.5, Sxx 42, Sxy 32, Syy 32, so b = 0.762, R² = 32²/(42 × 32)
	// = 0.762 < 0.9, SSE 7.62, SE(b) = √(7.62/6/42) = 0.174 and t = 4.38 >
	// t(0.975, 6) = 2.447: it changes with load, but not in a line.
	sc := fitted(t, "querier", MetricCPU, 1, 1, 1, 1, 5, 5, 5, 5)
	obs := Observe(nil, []Scaling{sc})
	if len(obs) != 1 || obs[0].Kind != ObsNotLinear || obs[0].Text != "querier CPU changes with load in MB/s, but not in a straight line (R² 0.76 over 8 profiles)" {
		t.Errorf("observations %+v", obs)
	}
}

func TestObserveClientBoundByUnissuedArrivals(t *testing.T) {
	behind := &Summary{Workload: Workload{Name: "p/ingest", Short: "ingest", Model: "open", Scheduled: 900, Unissued: 100}}
	lagging := &Summary{Workload: Workload{Name: "p/query", Model: "open", Scheduled: 1000}, Lag: Quantiles{Count: 100, P99: 12 * time.Millisecond}}
	obs := Observe([]Phase{{Profile: "p", Resources: profileResources(1, 1e9), Summaries: []*Summary{behind, lagging}}}, nil)
	if len(obs) == 0 || obs[0].Kind != ObsClientBound ||
		obs[0].Text != "in p the generator was the limit (client-bound) for ingest: the generator issued 900 of the 1000 arrivals due (100 not issued, 10.0 %)" {
		t.Errorf("observations %+v", obs)
	}
	if len(obs) > 1 && obs[1].Kind == ObsClientBound {
		t.Errorf("scheduler lag alone made an observation: %+v", obs[1])
	}
}

// With one component the total is that component: one observation, not
// the same twice; with two, the total speaks for itself too.
func TestObserveTotalOfOneComponentIsNotRepeated(t *testing.T) {
	one := fitted(t, "versitygw", MetricCPU, 1, 2, 3, 4)
	total := fitted(t, TotalComponent, MetricCPU, 1, 2, 3, 4)
	if obs := Observe(nil, []Scaling{one, total}); len(obs) != 1 || !strings.HasPrefix(obs[0].Text, "versitygw CPU") {
		t.Errorf("one component: %+v", obs)
	}
	two := fitted(t, "db", MetricCPU, 2, 4, 6, 8)
	if obs := Observe(nil, []Scaling{one, two, fitted(t, TotalComponent, MetricCPU, 3, 6, 9, 12)}); len(obs) != 3 {
		t.Errorf("two components: %+v", obs)
	}
}

// TestConstantOnlyWithinItsSpread: a resource whose slope is not
// significant is "constant across load" when its figures stay within
// ConstantSpread of their mean, and not when they spread further (both
// lines here are flat: a slope of exactly 0, an R² of 0).
func TestConstantOnlyWithinItsSpread(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ys       []float64
		constant bool
	}{
		{"within 14 %", []float64{1.15e9, 1.0e9, 1.0e9, 1.15e9}, true},
		{"spread 26 %", []float64{1.3e9, 1.0e9, 1.0e9, 1.3e9}, false},
	} {
		sc := fitted(t, "ingester", MetricMemory, tt.ys...)
		if !sc.Fit.Constant || !sc.Fit.Poor {
			t.Fatalf("%s: the fixture needs a flat, poor fit: %+v", tt.name, sc.Fit)
		}
		obs := Observe(nil, []Scaling{sc})
		said := len(obs) == 1 && obs[0].Kind == ObsConstant && strings.HasPrefix(obs[0].Text, "ingester memory is constant across load")
		if said != tt.constant || len(obs) > 1 || !tt.constant && len(obs) > 0 {
			t.Errorf("%s: observations %+v, want constant %v", tt.name, obs, tt.constant)
		}
		want := VerdictUnclear
		if tt.constant {
			want = VerdictConstant
		}
		if got := sc.Verdict(); got != want {
			t.Errorf("%s: verdict %q, want %q", tt.name, got, want)
		}
	}
}

// sharesOf is a phase whose components a, b and c used the given CPU and
// memory P99s, and whose generator used more than all of them.
func sharesOf(a, b, c float64) *Resources {
	st := func(v float64) Stat { return Stat{N: 100, P99: v, Max: v, Avg: v} }
	r := &Resources{Components: []ComponentResources{
		{Component: Component{Name: "a"}, CPU: st(a), Memory: st(a * 1e9)},
		{Component: Component{Name: "b"}, CPU: st(b), Memory: st(b * 1e9)},
		{Component: Component{Name: "c"}, CPU: st(c), Memory: st(c * 1e9)},
		{Component: Component{Name: "perflab", Kind: KindGenerator}, CPU: st(5), Memory: st(5e9)},
	}}
	r.CPU = Total{Components: 3, Sum: st(a + b + c), Summed: st(a + b + c)}
	r.Memory = Total{Components: 3, Sum: st((a + b + c) * 1e9), Summed: st((a + b + c) * 1e9)}
	return r
}

// TestPrimaryConsumerAtItsShare: the largest component is named "the
// primary consumer" from PrimaryShare (40 %) of the sum of the
// components' P99s in every phase, not below it, and the generator, which
// used more than all of them, is never named: it is not the system.
func TestPrimaryConsumerAtItsShare(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shares [][3]float64
		named  bool
	}{
		{"45 % in both phases", [][3]float64{{0.45, 0.30, 0.25}, {0.45, 0.35, 0.20}}, true},
		{"36 % in one phase", [][3]float64{{0.45, 0.30, 0.25}, {0.36, 0.32, 0.32}}, false},
	} {
		var phases []Phase
		for i, s := range tt.shares {
			phases = append(phases, Phase{Profile: fmt.Sprint(i), Resources: sharesOf(s[0], s[1], s[2])})
		}
		obs := Observe(phases, nil)
		if len(obs) != map[bool]int{true: 2}[tt.named] {
			t.Errorf("%s: observations %+v", tt.name, obs)
		}
		for _, o := range obs {
			if o.Kind != ObsShare || o.Component != "a" || !strings.HasPrefix(o.Text, "a accounts for ") {
				t.Errorf("%s: %+v, want a named the primary consumer", tt.name, o)
			}
		}
	}
}

// TestFallingIsNotScaling: a resource that falls in a line with load is
// said to fall, not to scale.
func TestFallingIsNotScaling(t *testing.T) {
	for _, tt := range []struct {
		ys   []float64
		verb string
	}{{[]float64{1, 2, 3, 4}, "scales linearly"}, {[]float64{4, 3, 2, 1}, "falls linearly"}} {
		obs := Observe(nil, []Scaling{fitted(t, "cache", MetricCPU, tt.ys...)})
		if len(obs) != 1 || obs[0].Kind != ObsLinear || !strings.HasPrefix(obs[0].Text, "cache CPU "+tt.verb+" with load") {
			t.Errorf("%v: %+v, want %q", tt.ys, obs, tt.verb)
		}
	}
}
