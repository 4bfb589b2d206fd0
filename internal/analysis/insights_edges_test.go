package analysis

import (
	"slices"
	"strings"
	"testing"
)

// A phase is sized only when it has both the samples of the system under
// test to size from and resource ticks in its window; the others are left
// out of the sizes.
func TestCellInsightsSizesOnlyPhasesWithSamples(t *testing.T) {
	for _, c := range []struct {
		name  string
		strip func(*PhaseData)
	}{
		{"no component to size", func(p *PhaseData) { p.Sizing = nil }},
		{"no resource tick in the window", func(p *PhaseData) { p.Resources.Ticks = 0 }},
	} {
		phases := threePhases(t)
		c.strip(&phases[1])
		in, err := CellInsights(phases, DefaultInsightOptions())
		if err != nil {
			t.Fatal(err)
		}
		var sizes []string
		for _, s := range in.Sizes {
			sizes = append(sizes, s.Size)
		}
		if !slices.Equal(sizes, []string{"s", "l"}) || !slices.Equal(in.Loads, []float64{100, 400}) {
			t.Errorf("%s: sizes %q, loads %v", c.name, sizes, in.Loads)
		}
	}
}

// Two profiles are enough for scaling lines (the verdict says they are
// too few to judge); one that held its load beside one left out is not,
// and the warning counts the one.
func TestCellInsightsTwoProfiles(t *testing.T) {
	phases := threePhases(t)[:2]
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Scaling) != 6 || in.Scaling[0].Fit == nil || in.Scaling[0].Verdict() != VerdictTooFew || len(in.Warnings) > 0 {
		t.Fatalf("two profiles: %d fits, warnings %q", len(in.Scaling), in.Warnings)
	}
	if app := in.Scaling[0].Fit; !closeTo(app.Slope, 0.001, 1e-9) {
		t.Errorf("app CPU over two profiles: slope %v", app.Slope)
	}
	phases[0].Resources.MachineWhy = "the machine's 2 cores were 97 % busy"
	in, err = CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"profile s is left out of the scaling fits: it was machine-bound: the machine, not the system, set its figures",
		"1 profile of 2 held its load on a machine it did not fill: no scaling fits (they need 2)"}
	if in.Scaling != nil || !slices.Equal(in.Warnings, want) {
		t.Errorf("one machine-bound of two: %d fits, warnings %q\nwant %q", len(in.Scaling), in.Warnings, want)
	}
}

// A profile whose workload completed no request has no size per request
// to compare: the load stays requests/s, and that profile is left out of
// the fits for want of one, which the warnings say once.
func TestCellInsightsNoRequestsInOneProfile(t *testing.T) {
	phases := threePhases(t)
	s := phases[0].Summaries[0]
	s.Rate, s.Ops[0].Rate = 0, 0 // still 100 KiB/s sent: no request completed
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"profile s has no requests/s of workload get: left out of the scaling fits"}
	if in.Load != LoadRequests || in.LoadNote != "" || !slices.Equal(in.Warnings, want) {
		t.Errorf("load %v, note %q, warnings %q", in.Load, in.LoadNote, in.Warnings)
	}
	// With one other profile: one point, no fits, and nothing more to say.
	in, err = CellInsights(phases[:2], DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if in.Scaling != nil || !slices.Equal(in.Warnings, want) {
		t.Errorf("two profiles, one without requests: %d fits, warnings %q", len(in.Scaling), in.Warnings)
	}
	// And that one machine-bound: only s held its load on a machine it did not fill.
	phases[1].Resources.MachineWhy = "the machine's 2 cores were 97 % busy"
	in, err = CellInsights(phases[:2], DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "profile m is left out of the scaling fits: it was machine-bound: the machine, not the system, set its figures",
		"1 profile of 2 held its load on a machine it did not fill: no scaling fits (they need 2)")
	if in.Scaling != nil || !slices.Equal(in.Warnings, want) {
		t.Errorf("two profiles, one without requests, one machine-bound: %d fits, warnings %q\nwant %q", len(in.Scaling), in.Warnings, want)
	}
}

// Requests exactly SizeSpread times larger in one profile than in another
// still measure load in requests/s.
func TestCellInsightsRequestSizesAtSizeSpread(t *testing.T) {
	phases := threePhases(t)
	for i, per := range []float64{1000, 1500, 2000} {
		op := &phases[i].Summaries[0].Ops[0]
		op.BytesSentPS, op.BytesRecvPS = 0, per*op.Rate
	}
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if in.Load != LoadRequests || in.LoadNote != "" || !slices.Equal(in.Loads, []float64{100, 200, 400}) {
		t.Errorf("sizes exactly 2x apart: load %v %v, note %q", in.Load, in.Loads, in.LoadNote)
	}
}

// The bytes per request a byte rate is converted with weigh each profile
// by the requests it made: its rate over its window's seconds.
func TestLoadInWeighsProfilesByRequests(t *testing.T) {
	phases := threePhases(t) // 100, 200, 400 requests/s
	// 1000 B × 100/s × 10 s + 1500 B × 200/s × 10 s + 1000 B × 400/s × 5 s
	// = 6 MB over 5000 requests: 1200 B each.
	for i, c := range []struct{ per, secs float64 }{{1000, 10}, {1500, 10}, {1000, 5}} {
		s := phases[i].Summaries[0]
		s.Seconds = c.secs
		s.Ops[0].BytesSentPS, s.Ops[0].BytesRecvPS = 0, c.per*s.Rate
	}
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	load, note, err := in.LoadIn(LoadBytes, 1200*300)
	if err != nil || !closeTo(load, 300, 1e-9) || !strings.HasPrefix(note, "352 KiB/s is 300 requests/s of workload get") ||
		!strings.Contains(note, "its requests moved 1.17 KiB each on average") {
		t.Errorf("a byte rate against requests/s fits: %v %q %v", load, note, err)
	}
}

// A workload that completed no request in any profile gives no bytes per
// request to convert a byte rate with.
func TestLoadInNoRequests(t *testing.T) {
	phases := threePhases(t)
	for _, p := range phases {
		s := p.Summaries[0]
		s.Rate, s.Seconds, s.Ops[0].Rate, s.Ops[0].BytesSentPS = 0, 20, 0, 0
	}
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if load, note, err := in.LoadIn(LoadBytes, 1<<20); err == nil || !strings.Contains(err.Error(), "whose requests moved no bytes") {
		t.Errorf("a byte rate against a workload of no requests: %v %q %v", load, note, err)
	}
}

// LoadText names the bytes sent from 1 B/s up.
func TestLoadTextBytesSent(t *testing.T) {
	for _, c := range []struct {
		sent float64
		want string
	}{{0, "get 2/s"}, {0.5, "get 2/s"}, {1, "get 2/s (1 B/s sent)"}, {1536, "get 2/s (1.5 KiB/s sent)"}} {
		s := &Summary{Workload: Workload{Name: "s/get", Short: "get"}, Rate: 2, Ops: []Op{{Name: "GET /", Rate: 2, BytesSentPS: c.sent}}}
		if got := LoadText([]*Summary{s}); got != c.want {
			t.Errorf("%v B/s sent: %q, want %q", c.sent, got, c.want)
		}
	}
}

// A line that gives exactly 0 at the load (a component that used no CPU
// in any profile) gives no request, and says so.
func TestPredictAtZero(t *testing.T) {
	f, err := FitLine([]float64{100, 200, 400}, []float64{0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	in := &Insights{Options: DefaultSizingOptions(), Scaling: []Scaling{{Component: "sidecar", Metric: MetricCPU, Fit: &f}}}
	p := in.PredictAt(300)[0]
	if p.Prediction.Value != 0 || !p.Request.IsZero() || !p.Limit.IsZero() ||
		!slices.Contains(p.Prediction.Warnings, "the line gives 0 at this load: no request can be derived from it") {
		t.Errorf("sidecar CPU at 300/s: %+v, request %s, limit %s", p.Prediction, p.Request, p.Limit)
	}
}

// A resource whose slope is not significant is constant while its spread
// is at most ConstantSpread of its mean, 20 %: 4.5 to 5.5 around 5.
func TestVerdictConstantAtItsSpread(t *testing.T) {
	loads := []float64{100, 200, 400}
	for _, c := range []struct {
		values []float64
		want   string
	}{
		{[]float64{4.5, 5.5, 5}, VerdictConstant},  // spread 1 of 5: 20 %
		{[]float64{4.25, 5.75, 5}, VerdictUnclear}, // spread 1.5 of 5: 30 %
	} {
		f, err := FitLine(loads, c.values)
		if err != nil {
			t.Fatal(err)
		}
		sc := Scaling{Component: "app", Metric: MetricCPU, Fit: &f}
		for i, l := range loads {
			sc.Points = append(sc.Points, ScalingValue{Profile: string(rune('a' + i)), Load: l, Value: c.values[i]})
		}
		if got := sc.Verdict(); got != c.want || !f.Constant {
			t.Errorf("%v cores: %q (constant slope %v), want %q", c.values, got, f.Constant, c.want)
		}
	}
}

// The count of held profiles reads as English at 0, 1 and more.
func TestHeldOfReads(t *testing.T) {
	for held, want := range []string{"none of the 3 profiles held its load on a machine it did not fill",
		"1 profile of 3 held its load on a machine it did not fill", "2 profiles of 3 held their load on a machine they did not fill"} {
		if got := heldOf(held, 3); got != want {
			t.Errorf("heldOf(%d, 3) = %q, want %q", held, got, want)
		}
	}
}
