package analysis

import (
	"fmt"
	"strings"
	"testing"
)

// TestClientBoundFiguresCountTheArrivalsDue: the figures of a client-bound
// observation by unissued arrivals are the arrivals due (issued and not)
// and those not issued.
func TestClientBoundFiguresCountTheArrivalsDue(t *testing.T) {
	behind := &Summary{Workload: Workload{Name: "p/ingest", Model: "open", Scheduled: 900, Unissued: 100}}
	obs := Observe([]Phase{{Profile: "p", Summaries: []*Summary{behind}}}, nil)
	if len(obs) != 1 || obs[0].Kind != ObsClientBound {
		t.Fatalf("observations %+v", obs)
	}
	want := []ObsFigure{{"arrivals due", 1000, ""}, {"not issued", 100, ""}}
	if f := obs[0].Figures; len(f) != len(want) || f[0] != want[0] || f[1] != want[1] {
		t.Errorf("figures %+v, want %+v", f, want)
	}
}

// TestPrimaryConsumerAtItsEdges: exactly PrimaryShare (40 %) of the sum is
// enough to be named; one profile is not "across 1 profiles"; two
// components tied at the top leave the first listed named, in every
// profile alike.
func TestPrimaryConsumerAtItsEdges(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shares [][3]float64
		cpu    string // the CPU observation's text; "" for none
	}{
		{"40 % in one profile", [][3]float64{{4, 3, 3}},
			"a accounts for 40 % of CPU (of the sum of the components' P99s)"},
		{"40 % and 50 % in two profiles", [][3]float64{{4, 3, 3}, {5, 3, 2}},
			"a accounts for 40–50 % of CPU across 2 profiles (of the sum of the components' P99s)"},
		{"a and b tied at 40 %", [][3]float64{{4, 4, 2}, {4, 4, 2}},
			"a accounts for 40 % of CPU across 2 profiles (of the sum of the components' P99s)"},
		{"39 % just below", [][3]float64{{3.9, 3.05, 3.05}}, ""},
	} {
		var phases []Phase
		for i, s := range tt.shares {
			phases = append(phases, Phase{Profile: fmt.Sprint(i), Resources: sharesOf(s[0], s[1], s[2])})
		}
		var texts []string
		for _, o := range Observe(phases, nil) {
			if o.Kind == ObsShare && o.Metric == MetricCPU {
				texts = append(texts, o.Text)
			}
		}
		switch {
		case tt.cpu == "" && len(texts) != 0:
			t.Errorf("%s: %q, want no CPU share", tt.name, texts)
		case tt.cpu != "" && (len(texts) != 1 || texts[0] != tt.cpu):
			t.Errorf("%s: %q, want %q", tt.name, texts, tt.cpu)
		}
	}
}

// TestPrimaryConsumerNeedsTwoComponents: a system of one component has no
// primary consumer of a resource (it would be 100 % of it); the resource
// measured for only one component has none, while the other, measured for
// all three, has.
func TestPrimaryConsumerNeedsTwoComponents(t *testing.T) {
	st := func(v float64) Stat { return Stat{N: 100, P99: v, Max: v, Avg: v} }
	one := &Resources{Components: []ComponentResources{
		{Component: Component{Name: "gw"}, CPU: st(2), Memory: st(2e9)},
		{Component: Component{Name: "perflab", Kind: KindGenerator}, CPU: st(1), Memory: st(1e9)},
	}}
	one.CPU = Total{Components: 1, Sum: st(2), Summed: st(2)}
	one.Memory = Total{Components: 1, Sum: st(2e9), Summed: st(2e9)}
	if obs := Observe([]Phase{{Profile: "p", Resources: one}}, nil); len(obs) != 0 {
		t.Errorf("one component: observations %+v", obs)
	}

	for _, metric := range []string{MetricMemory, MetricCPU} {
		r := sharesOf(6, 2, 2)
		// Only a's figure of the other resource was measured.
		other := &r.CPU
		if metric == MetricCPU {
			other = &r.Memory
		}
		other.Components = 1
		other.Sum, other.Summed = st(other.Sum.P99*0.6), st(other.Sum.P99*0.6)
		for i := 1; i < 3; i++ {
			if metric == MetricCPU {
				r.Components[i].Memory = Stat{}
			} else {
				r.Components[i].CPU = Stat{}
			}
		}
		obs := Observe([]Phase{{Profile: "p", Resources: r}}, nil)
		what := map[string]string{MetricMemory: "memory", MetricCPU: "CPU"}[metric]
		if len(obs) != 1 || obs[0].Metric != metric || !strings.HasPrefix(obs[0].Text, "a accounts for 60 % of "+what+" (") {
			t.Errorf("%s of three components, the other of one: observations %+v", what, obs)
		}
	}
}

// TestConstantAtItsEdges: a spread of exactly ConstantSpread (20 %) is
// still constant; a resource at 0 in every profile is not said to be
// constant (there is no spread relative to a mean of 0 to judge).
func TestConstantAtItsEdges(t *testing.T) {
	for _, tt := range []struct {
		name string
		ys   []float64
		text string // "" for no observation
	}{
		{"spread exactly 20 %", []float64{0.9e9, 1.0e9, 1.1e9, 1.0e9},
			"cache memory is constant across load: 954 MiB on average (858 MiB to 1.02 GiB over 4 profiles)"},
		{"at 0 in every profile", []float64{0, 0, 0, 0}, ""},
	} {
		sc := fitted(t, "cache", MetricMemory, tt.ys...)
		if !sc.Fit.Constant {
			t.Fatalf("%s: the fixture needs a slope that is not significant: %+v", tt.name, sc.Fit)
		}
		obs := Observe(nil, []Scaling{sc})
		switch {
		case tt.text == "" && len(obs) != 0:
			t.Errorf("%s: observations %+v, want none", tt.name, obs)
		case tt.text != "" && (len(obs) != 1 || obs[0].Kind != ObsConstant || obs[0].Text != tt.text):
			t.Errorf("%s: observations %+v, want %q", tt.name, obs, tt.text)
		}
	}
}
