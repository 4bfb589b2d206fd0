package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// heldSummary is an open-model workload get asked for target/s that
// achieved rate/s over 20 s, dropped dropped arrivals and had a latency
// p99 of p99 over count latencies, and a p50 of a fifth of it.
func heldSummary(target, rate float64, dropped int64, p99 time.Duration, count int64) *Summary {
	return &Summary{Workload: Workload{Name: "get", Model: "open", TargetRate: target, VUsMax: 20},
		Seconds: 20, Rate: rate, Requests: int64(20 * rate), Dropped: dropped, Latency: Quantiles{Count: count, P50: p99 / 5, P99: p99}}
}

// withP50 is s with its latency p50 p50.
func withP50(s *Summary, p50 time.Duration) *Summary {
	s.Latency.P50 = p50
	return s
}

func heldPhase(profile string, sums ...*Summary) PhaseData {
	return PhaseData{Profile: profile, Resources: &Resources{}, Summaries: sums}
}

// TestJudgeHeld: the figures on each side of each limit, both ways.
func TestJudgeHeld(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	base := heldPhase("s", heldSummary(100, 100, 0, ms(10), 2000))
	for _, tt := range []struct {
		name  string
		phase PhaseData
		want  string // part of the reasons; "" when sustained
	}{
		{"held", heldPhase("m", heldSummary(200, 199, 0, ms(12), 4000)), ""},
		{"4 % short", heldPhase("m", heldSummary(200, 192, 0, ms(12), 4000)), ""},
		{"5 % short, the limit", heldPhase("m", heldSummary(200, 190, 0, ms(12), 4000)), ""},
		// The Tempo profile: 27.1 of 33.3 traces/s.
		{"19 % short", heldPhase("m", heldSummary(33.3, 27.1, 0, ms(12), 4000)), "workload get achieved 27.1/s of the 33.3/s asked (18.6 % short)"},
		{"dropped 1.2 %", heldPhase("m", heldSummary(200, 200, 48, ms(12), 4000)),
			"workload get dropped 48 of 4048 arrivals (1.2 %): every VU was busy at vus.max 20"},
		{"dropped 0.5 %", heldPhase("m", heldSummary(200, 200, 20, ms(12), 4000)), ""},
		{"dropped 1 %, the limit", heldPhase("m", heldSummary(200, 198, 40, ms(12), 4000)),
			"workload get dropped 40 of 4000 arrivals (1.0 %)"},
		{"a knee", heldPhase("m", heldSummary(200, 200, 0, ms(25), 4000)),
			"workload get latency broke away from profile s's: p99 25ms against 10ms, p50 5ms against 2ms (both over 2×: a knee)"},
		// The latencies it names are to three significant digits.
		{"a knee, to three digits", heldPhase("m", withP50(heldSummary(200, 200, 0, ms(25.04), 4000), ms(5.008))),
			"p99 25ms against 10ms, p50 5.01ms against 2ms"},
		{"twice the p99", heldPhase("m", heldSummary(200, 200, 0, ms(19.9), 4000)), ""},
		{"a knee on too few latencies", heldPhase("m", heldSummary(200, 200, 0, ms(25), 99)), ""},
		// A stall of a busy machine lifts the tail alone (the demo on a
		// loaded machine: p99 15 → 152 ms, p50 10.3 → 12.1 ms).
		{"the tail alone", heldPhase("m", withP50(heldSummary(200, 200, 0, ms(25), 4000), ms(4))), ""},
	} {
		held := JudgeHeld([]PhaseData{base, tt.phase})
		if !held[0].Sustained() {
			t.Errorf("%s: the first profile is unsustained: %q", tt.name, held[0].Why())
		}
		h := held[1]
		if h.Sustained() != (tt.want == "") || !strings.Contains(h.Why(), tt.want) || h.Fits() != (tt.want == "") {
			t.Errorf("%s: sustained %v, fits %v (%q); want %v (%q)", tt.name, h.Sustained(), h.Fits(), h.Why(), tt.want == "", tt.want)
		}
		if marks := h.Marks(); (len(marks) == 1 && marks[0] == "unsustained") != (tt.want != "") {
			t.Errorf("%s: marks %q", tt.name, marks)
		}
	}
}

// A client-bound profile's shortfall is the generator's: it stays
// sustained, marked client-bound; a machine-bound one is sustained but
// out of the fits.
func TestJudgeHeldKeepsClientAndMachineBoundApart(t *testing.T) {
	short := heldSummary(33.3, 27.1, 109, 10*time.Millisecond, 4000)
	short.ClientBound, short.ClientWhy = true, "the generator issued 542 of the 666 arrivals due"
	held := JudgeHeld([]PhaseData{heldPhase("m", short)})[0]
	if !held.Sustained() || !held.ClientBound || !held.Fits() || !slices.Equal(held.Marks(), []string{"client-bound"}) {
		t.Errorf("client-bound: %+v, marks %q", held, held.Marks())
	}
	p := heldPhase("m", heldSummary(100, 100, 0, 10*time.Millisecond, 2000))
	p.Resources.MachineWhy = "generator 0.55 + minio 1.45 = 2.00 of 2 cores"
	held = JudgeHeld([]PhaseData{p})[0]
	if !held.Sustained() || held.Fits() || !slices.Equal(held.Marks(), []string{"machine-bound"}) ||
		held.LeftOutText("m") != "profile m is left out of the scaling fits: it was machine-bound: the machine, not the system, set its figures" {
		t.Errorf("machine-bound: %+v, marks %q, %q", held, held.Marks(), held.LeftOutText("m"))
	}
}

// TestCellInsightsLeaveUnsustainedOut: a fourth profile asked for 800/s
// that achieved 500/s, with app's CPU where the third's was, is marked
// and left out of the fits, which stay those of the three held profiles
// (app CPU = 0.1 + 0.001 × rate exactly; with the fourth point in, the
// slope would fall); the observations say so.
func TestCellInsightsLeaveUnsustainedOut(t *testing.T) {
	phases := threePhases(t)
	for _, p := range phases {
		p.Summaries[0].Workload.Model, p.Summaries[0].Workload.TargetRate = "open", p.Summaries[0].Rate
	}
	xl := insightPhase(t, "xl", time.Date(2026, 11, 21, 17, 3, 0, 0, time.UTC), 500, 0.5, 400)
	xl.Summaries[0].Workload.Model, xl.Summaries[0].Workload.TargetRate = "open", 800
	in, err := CellInsights(append(phases, xl), DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Sizes) != 4 || !in.Sizes[2].Held.Sustained() || in.Sizes[3].Held.Sustained() ||
		!strings.Contains(in.Sizes[3].Held.Why(), "workload get achieved 500/s of the 800/s asked (37.5 % short)") {
		t.Fatalf("sizes: %+v", in.Sizes)
	}
	app := in.Scaling[0]
	if app.Component != "app" || len(app.Points) != 3 || !closeTo(app.Fit.Slope, 0.001, 1e-9) || !closeTo(app.Fit.Intercept, 0.1, 1e-9) {
		t.Errorf("app CPU fit over %d points: %+v", len(app.Points), app.Fit)
	}
	want := "profile xl is left out of the scaling fits: the system did not hold its load (unsustained): its capacity was reached below that load"
	if !slices.Contains(in.Warnings, want) {
		t.Errorf("warnings %q, want %q", in.Warnings, want)
	}
	if !slices.ContainsFunc(in.Observations, func(o Observation) bool {
		return o.Kind == ObsUnsustained && strings.HasPrefix(o.Text, "in xl the system did not hold the load (unsustained): workload get achieved 500/s")
	}) {
		t.Errorf("observations %+v", in.Observations)
	}
	// Held, the fourth profile is fitted like the others.
	xl.Summaries[0].Workload.TargetRate = 500
	in, err = CellInsights(append(threePhases(t), xl), DefaultInsightOptions())
	if err != nil || len(in.Scaling[0].Points) != 4 || !in.Sizes[3].Held.Sustained() {
		t.Errorf("held: %d points, %+v, %v", len(in.Scaling[0].Points), in.Sizes[3].Held, err)
	}
}

// A knee is looked for against the last earlier profile at a lower load:
// a profile asked for the same load is passed over.
func TestJudgeHeldKneeAgainstALowerLoad(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	phases := []PhaseData{
		heldPhase("s", heldSummary(100, 100, 0, ms(10), 2000)),
		heldPhase("m", heldSummary(200, 200, 0, ms(12), 4000)),
		heldPhase("m2", heldSummary(200, 200, 0, ms(25), 4000)),
	}
	held := JudgeHeld(phases)
	want := "workload get latency broke away from profile s's: p99 25ms against 10ms"
	if !held[1].Sustained() || !strings.Contains(held[2].Why(), want) {
		t.Errorf("m: %q; m2: %q, want %q", held[1].Why(), held[2].Why(), want)
	}
	// The same load twice, the second slower: no knee.
	held = JudgeHeld(phases[1:])
	if !held[1].Sustained() {
		t.Errorf("m2 after m, the same load: %q", held[1].Why())
	}
}

// Latencies of 1000 s and more are named to the second, no coarser.
func TestJudgeHeldKneeOfLongLatencies(t *testing.T) {
	s := time.Second
	held := JudgeHeld([]PhaseData{
		heldPhase("s", heldSummary(100, 100, 0, 500*s, 2000)),
		heldPhase("m", heldSummary(200, 200, 0, 1234567*time.Millisecond, 4000)),
	})
	want := "p99 20m35s against 8m20s, p50 4m7s against 1m40s"
	if !strings.Contains(held[1].Why(), want) {
		t.Errorf("%q, want %q", held[1].Why(), want)
	}
}

// withOps gives s one operation, get, of which failed of s's requests
// failed.
func withOps(s *Summary, failed int64) *Summary {
	s.Ops = []Op{{Name: "get", Requests: s.Requests, OK: s.Requests - failed}}
	return s
}

// A failing load is no size: the streaming gateway's 625 of 1,251 failed
// requests make its profile unsustained, client-bound or not; 1 % is
// allowed, or the plan's error_rate bound.
func TestJudgeHeldFailures(t *testing.T) {
	ms10 := 10 * time.Millisecond
	gateway := withOps(&Summary{Workload: Workload{Name: "chat", Model: "open", TargetRate: 62.55, VUsMax: 64},
		Seconds: 20, Rate: 62.55, Requests: 1251, Latency: Quantiles{Count: 626, P50: ms10, P99: ms10}}, 625)
	h := JudgeHeld([]PhaseData{heldPhase("m", gateway)})[0]
	if want := "workload chat failed 625 of 1251 requests (50 %), over the 1 % a held load may fail"; h.Sustained() || h.Why() != want {
		t.Errorf("%q, want %q", h.Why(), want)
	}
	gateway.ClientBound = true
	if h := JudgeHeld([]PhaseData{heldPhase("m", gateway)})[0]; h.Sustained() || !h.ClientBound {
		t.Errorf("client-bound and failing: %+v", h)
	}
	for _, tt := range []struct {
		failed int64
		limit  float64
		held   bool
	}{{40, 0, true}, {41, 0, false}, {200, 0.05, true}, {201, 0.05, false}, {0, 0, true}} {
		p := heldPhase("m", withOps(heldSummary(200, 200, 0, ms10, 4000), tt.failed))
		p.ErrorLimit = tt.limit
		if h := JudgeHeld([]PhaseData{p})[0]; h.Sustained() != tt.held {
			t.Errorf("%d of 4000 failed, limit %v: sustained %v (%q), want %v", tt.failed, tt.limit, h.Sustained(), h.Why(), tt.held)
		}
	}
}

// A knee is judged against a baseline of the same driver parameters that
// the system held on a machine it did not fill: the 1 MiB GET after the
// 1 KiB one, both named get, is no knee of the 1 KiB GET's.
func TestJudgeHeldKneeOnlyAgainstLikeLoads(t *testing.T) {
	ms := time.Millisecond
	small, big := heldSummary(100, 100, 0, 10*ms, 2000), heldSummary(200, 200, 0, 25*ms, 4000)
	small.Workload.Params, big.Workload.Params = `{"size":"1KiB"}`, `{"size":"1MiB"}`
	if h := JudgeHeld([]PhaseData{heldPhase("1kib-1", small), heldPhase("1mib-1", big)})[1]; !h.Sustained() {
		t.Errorf("against another object size: %q", h.Why())
	}
	big.Workload.Params = small.Workload.Params
	if h := JudgeHeld([]PhaseData{heldPhase("1kib-1", small), heldPhase("1kib-2", big)})[1]; h.Sustained() {
		t.Error("the same parameters: no knee")
	}
	base := heldPhase("1kib-1", small)
	base.Resources.MachineWhy = "generator 0.55 + minio 1.45 = 2.00 of 2 cores"
	if h := JudgeHeld([]PhaseData{base, heldPhase("1kib-2", big)})[1]; !h.Sustained() {
		t.Errorf("against a machine-bound baseline: %q", h.Why())
	}
}

// serviceIntervals is n one-second histograms of count service times
// each, lognormal around median (σ 0.3), from seed.
func serviceIntervals(n, count int, median time.Duration, seed uint64) []*stats.Hist {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]*stats.Hist, n)
	for i := range out {
		h := stats.NewHist()
		for range count {
			h.Record(time.Duration(float64(median) * math.Exp(0.3*rng.NormFloat64())))
		}
		out[i] = h
	}
	return out
}

// The Tempo profile: its latency p50 from the intended start doubled
// (1.94 → 3.94 ms, a late dispatch on a busy machine) while its service
// time rose 1.42×: no knee, in each of five runs of new samples. A queue
// that triples the service time is one, in each of five.
func TestJudgeHeldKneeRestsOnServiceTime(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for seed := range uint64(5) {
		base := withP50(heldSummary(31.4, 31.4, 0, ms(5), 1884), ms(1.94))
		base.ServiceByInterval = serviceIntervals(60, 31, ms(1.8), 2*seed)
		jitter := withP50(heldSummary(62.75, 62.7, 0, ms(14), 3762), ms(3.94))
		jitter.ServiceByInterval = serviceIntervals(60, 62, ms(1.8*1.42), 2*seed+1)
		if h := JudgeHeld([]PhaseData{heldPhase("s", base), heldPhase("m", jitter)})[1]; !h.Sustained() {
			t.Errorf("run %d: service time ×1.42 judged a knee: %q", seed, h.Why())
		}
		queue := withP50(heldSummary(62.75, 62.7, 0, ms(14), 3762), ms(6))
		queue.ServiceByInterval = serviceIntervals(60, 62, ms(1.8*3), 2*seed+1)
		h := JudgeHeld([]PhaseData{heldPhase("s", base), heldPhase("m", queue)})[1]
		if !strings.Contains(h.Why(), "p99 14ms against 5ms, service time p50 5.") || !strings.Contains(h.Why(), "95 % interval") {
			t.Errorf("run %d: service time ×3: %q", seed, h.Why())
		}
	}
	// Too few intervals for an interval: the service time's point
	// estimate, said so.
	base := heldSummary(100, 100, 0, ms(10), 2000)
	base.ServiceByInterval = serviceIntervals(20, 100, ms(1.8), 1)
	knee := heldSummary(200, 200, 0, ms(25), 4000)
	knee.ServiceByInterval = serviceIntervals(20, 200, ms(6), 2)
	h := JudgeHeld([]PhaseData{heldPhase("s", base), heldPhase("m", knee)})[1]
	if !strings.Contains(h.Why(), "service time p50 6.01ms against 1.8") || !strings.Contains(h.Why(), "(20 and 20 intervals: too few for a 95 % interval)") {
		t.Errorf("20 intervals a side, service time ×3.3: %q", h.Why())
	}
	knee.ServiceByInterval = serviceIntervals(20, 200, ms(1.8*1.42), 2)
	if h := JudgeHeld([]PhaseData{heldPhase("s", base), heldPhase("m", knee)})[1]; !h.Sustained() {
		t.Errorf("20 intervals a side, service time ×1.42: %q", h.Why())
	}
}
