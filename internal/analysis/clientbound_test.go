package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/slo"
)

// phase feeds the analysis one phase as the run report does: a workload
// whose scheduler lag p99 is lag, that issued scheduled arrivals and left
// unissued, and a generator that used cpu of its 2 cores.
func phase(lag time.Duration, scheduled, unissued uint64, cpu float64) (*Summary, *Resources) {
	w := Workload{Name: "w", Model: "open", VUsMax: 50, Scheduled: scheduled, Unissued: unissued,
		Window: Window{Start: t0, End: t0.Add(20 * time.Second)}}
	ivs := intervals(t0, 20)
	for _, iv := range ivs {
		iv.Dropped = 0
		for range 100 {
			iv.Lag.Record(lag)
		}
	}
	sum := Summarize(w, ivs)
	res := SummarizeResources(ResourceInput{Window: w.Window,
		Components: []Component{{Name: "perflab", Kind: KindGenerator}},
		Series: map[string]map[string][]Point{"perflab": {
			"cpu_cores": series(slices.Repeat([]float64{cpu}, 20)...), "cores_available": series(slices.Repeat([]float64{2}, 20)...)}}})
	MarkClientBound(res, []*Summary{sum})
	return sum, res
}

// The client-bound verdict can be wrong both ways: high lag on a loaded
// machine is no verdict, a generator at its CPU limit is one even with no
// lag, and so is a schedule it could not keep.
func TestClientBoundVerdict(t *testing.T) {
	for _, tt := range []struct {
		name                string
		lag                 time.Duration
		scheduled, unissued uint64
		cpu                 float64
		why                 string // "" when not client-bound
	}{
		{"lag on a loaded machine", 20 * time.Millisecond, 2000, 0, 0.2, ""},
		{"CPU at its limit", 100 * time.Microsecond, 2000, 0, 1.9, "generator CPU P99 1.9 of 2 cores (≥ 90 %)"},
		{"schedule not kept", 20 * time.Millisecond, 1500, 500, 0.5, "the generator issued 1500 of the 2000 arrivals due (500 not issued, 25.0 %)"},
		{"a few late at the end", 20 * time.Millisecond, 1995, 5, 0.5, ""},
	} {
		sum, res := phase(tt.lag, tt.scheduled, tt.unissued, tt.cpu)
		bound := tt.why != ""
		if sum.ClientBound != bound || sum.ClientWhy != tt.why {
			t.Errorf("%s: client-bound %v (%q), want %v (%q)", tt.name, sum.ClientBound, sum.ClientWhy, bound, tt.why)
		}
		if got, why := GeneratorLimited(sum, res); got != bound || why != tt.why {
			t.Errorf("%s: the search's verdict %v (%q), want %v (%q)", tt.name, got, why, bound, tt.why)
		}
		if hasWarning(sum, "client-bound: "+tt.why) != bound {
			t.Errorf("%s: warnings %q", tt.name, sum.Warnings)
		}
		if lagged := tt.lag > lagLimit; hasWarning(sum, "arrivals went out late") != lagged {
			t.Errorf("%s: lag %v shown %v, warnings %q", tt.name, tt.lag, !lagged, sum.Warnings)
		}
		if shown := hasWarning(sum, "client-bound: "+tt.why+" (scheduler lag p99 "); shown != (bound && tt.lag > lagLimit) {
			t.Errorf("%s: lag %v beside the verdict %v, warnings %q", tt.name, tt.lag, shown, sum.Warnings)
		}
		g, _ := slo.ParseGate("p99 < 1s")
		vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{sum}, nil)
		if err != nil || len(vs) != 1 || strings.Contains(vs[0].Note, "client-bound") != bound {
			t.Errorf("%s: gate %+v, %v", tt.name, vs, err)
		}
		obs := Observe([]Phase{{Profile: "p", Resources: res, Summaries: []*Summary{sum}}}, nil)
		if got := slices.ContainsFunc(obs, func(o Observation) bool { return o.Kind == ObsClientBound }); got != bound {
			t.Errorf("%s: client-bound observation %v, want %v: %+v", tt.name, got, bound, obs)
		}
	}
}

// The scheduler lag is named beside a client-bound verdict only above
// lagLimit: at exactly 5 ms it is not, just above it is.
func TestClientBoundNamesTheLagAboveItsLimit(t *testing.T) {
	for _, tt := range []struct {
		p99   time.Duration
		shown bool
	}{{lagLimit, false}, {lagLimit + time.Microsecond, true}} {
		s := &Summary{Lag: Quantiles{Count: 100, P99: tt.p99}}
		s.markClientBound("the generator issued 1 of the 2 arrivals due")
		if got := hasWarning(s, "(scheduler lag p99 "); got != tt.shown {
			t.Errorf("lag p99 %v: shown %v, want %v: %q", tt.p99, got, tt.shown, s.Warnings)
		}
	}
}
