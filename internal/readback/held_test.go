package readback

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/view"
)

// heldProfiles are s, m and l, held at 100, 200 and 400/s with app at
// 0.1 + 0.001 × rate cores, and xl, asked for 800/s, which achieved 500/s
// and dropped 10 arrivals a second with app at l's 0.5 cores (pegged), its
// latency 10 ms against 2 ms: the Tempo profile that was sized and fitted.
func heldProfiles() []resultstest.Profile {
	ms := time.Millisecond
	return []resultstest.Profile{
		{Name: "s", Target: 100, Achieved: 100, Latency: 2 * ms, AppCPU: 0.2, GenCPU: 0.1},
		{Name: "m", Target: 200, Achieved: 200, Latency: 2 * ms, AppCPU: 0.3, GenCPU: 0.1},
		{Name: "l", Target: 400, Achieved: 400, Latency: 2 * ms, AppCPU: 0.5, GenCPU: 0.1},
		{Name: "xl", Target: 800, Achieved: 500, Latency: 10 * ms, Dropped: 10, AppCPU: 0.5, GenCPU: 0.1},
	}
}

// writeLoaded writes the profiles, reads the run back and writes its
// report files, returning the run directory and its insights' JSON.
func writeLoaded(t *testing.T, profiles []resultstest.Profile) (string, jsonInsights) {
	t.Helper()
	dir := resultstest.WriteProfiles(t, t.TempDir(), profiles)
	store, err := results.Open(dir)
	resultstest.Must(t, err)
	defer store.Close()
	r, err := Load(store)
	resultstest.Must(t, err)
	_, err = report.WriteFiles(store.Dir(), r)
	resultstest.Must(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	resultstest.Must(t, err)
	var s struct {
		Cells []struct {
			Insights jsonInsights `json:"insights"`
		} `json:"cells"`
	}
	resultstest.Must(t, json.Unmarshal(data, &s))
	return dir, s.Cells[0].Insights
}

type jsonInsights struct {
	Sizes []struct {
		Size         string `json:"size"`
		Sustained    bool   `json:"sustained"`
		SustainedWhy string `json:"sustained_why"`
		MachineBound bool   `json:"machine_bound"`
		MachineWhy   string `json:"machine_bound_reason"`
	} `json:"sizes"`
	Scaling struct {
		Fits []struct {
			Component, Metric string
			Points            []struct{ Profile string }
			Slope             float64
		} `json:"fits"`
	} `json:"scaling"`
	Observations []struct{ Kind, Text string } `json:"observations"`
	Warnings     []string                      `json:"warnings"`
}

// TestUnsustainedSizesFromTheStore: read back from a store, the profile
// the system did not hold is marked in summary.json (sustained false, with
// why; the others true), in its sizes/ file and observations, and left out
// of the fits, whose slope stays the held profiles' 0.001 cores per
// request/s (with xl in it would be 0.00059).
func TestUnsustainedSizesFromTheStore(t *testing.T) {
	dir, in := writeLoaded(t, heldProfiles())
	var got []bool
	for _, s := range in.Sizes {
		got = append(got, s.Sustained)
	}
	if !slices.Equal(got, []bool{true, true, true, false}) {
		t.Fatalf("sustained %v, want true, true, true, false", got)
	}
	why := in.Sizes[3].SustainedWhy
	for _, want := range []string{"workload get achieved 500/s of the 800/s asked (37.5 % short)",
		"workload get dropped 200 of 10200 arrivals (2.0 %): every VU was busy at vus.max 50",
		"workload get latency broke away from profile l's: p99 10ms against 2ms, service time p50 10ms against 2ms (20 and 20 intervals: too few for a 95 % interval) (both over 2×: a knee)"} {
		if !strings.Contains(why, want) {
			t.Errorf("sustained_why %q lacks %q", why, want)
		}
	}
	fit := in.Scaling.Fits[0]
	if fit.Component != "app" || fit.Metric != "cpu" || len(fit.Points) != 3 || fit.Slope < 0.000999 || fit.Slope > 0.001001 {
		t.Errorf("app CPU fit %+v", fit)
	}
	if !slices.ContainsFunc(in.Warnings, func(w string) bool {
		return w == "profile xl is left out of the scaling fits: the system did not hold its load (unsustained): its capacity was reached below that load"
	}) {
		t.Errorf("warnings %q", in.Warnings)
	}
	if !slices.ContainsFunc(in.Observations, func(o struct{ Kind, Text string }) bool { return o.Kind == "unsustained" }) {
		t.Errorf("observations %+v", in.Observations)
	}
	for size, want := range map[string]bool{"s": false, "xl": true} {
		y, err := os.ReadFile(filepath.Join(dir, "sizes", "default-"+size+".yaml"))
		resultstest.Must(t, err)
		if strings.Contains(string(y), "\n# unsustained: the system did not hold its load: workload get achieved 500/s") != want {
			t.Errorf("sizes/default-%s.yaml, unsustained %v:\n%s", size, want, y)
		}
	}
}

// TestMachineBoundSizesFromTheStore: a profile in which app (1.45 cores)
// and the generator (0.4) filled the 2 cores is machine-bound, marked and
// left out of the fits; below 90 % (1.35 + 0.4) it is not.
func TestMachineBoundSizesFromTheStore(t *testing.T) {
	for _, tt := range []struct {
		app  float64
		want string
	}{
		{1.45, "generator 0.40 + app 1.45 = 1.85 of 2 cores (≥ 90 %"},
		{1.35, ""},
	} {
		ps := heldProfiles()[:3]
		ps[2].AppCPU, ps[2].GenCPU = tt.app, 0.4
		dir, in := writeLoaded(t, ps)
		l := in.Sizes[2]
		if l.MachineBound != (tt.want != "") || !strings.Contains(l.MachineWhy, tt.want) || !l.Sustained {
			t.Errorf("app at %v: machine-bound %v (%q), sustained %v", tt.app, l.MachineBound, l.MachineWhy, l.Sustained)
		}
		if n := len(in.Scaling.Fits[0].Points); n != map[bool]int{true: 2, false: 3}[tt.want != ""] {
			t.Errorf("app at %v: %d points in the fit", tt.app, n)
		}
		y, err := os.ReadFile(filepath.Join(dir, "sizes", "default-l.yaml"))
		resultstest.Must(t, err)
		if strings.Contains(string(y), "\n# machine-bound: generator 0.40 + app") != (tt.want != "") {
			t.Errorf("app at %v: sizes/default-l.yaml:\n%s", tt.app, y)
		}
	}
}

// A failing profile is no size: m, whose 1.5 % of requests failed, is
// marked unsustained with its failures; a gate of the plan's on
// error_rate sets the share a held load may fail instead of 1 %.
func TestFailingProfileIsNotSustained(t *testing.T) {
	profiles := heldProfiles()[:3]
	profiles[1].Failed = 3
	_, in := writeLoaded(t, profiles)
	want := "workload get failed 60 of 4000 requests (1.5 %), over the 1 % a held load may fail"
	if s := in.Sizes[1]; s.Sustained || s.SustainedWhy != want || !in.Sizes[0].Sustained || !in.Sizes[2].Sustained {
		t.Errorf("sizes %+v, want m unsustained: %q", in.Sizes, want)
	}
	meta := results.Meta{Extra: WithSLO(nil, []GateSpec{{Expr: "error_rate < 2%", Profile: "m"}, {Expr: "error_rate <= 5%"},
		{Expr: "p99 < 10ms"}, {Expr: "error_rate < 0.1%", Profile: "l"}})}
	data := []analysis.PhaseData{{Profile: "s"}, {Profile: "m"}, {Profile: "l"}}
	errorLimits(meta, data)
	if data[0].ErrorLimit != 0.05 || data[1].ErrorLimit != 0.02 || data[2].ErrorLimit != 0.001 {
		t.Errorf("limits %v, %v, %v; want 0.05, 0.02, 0.001", data[0].ErrorLimit, data[1].ErrorLimit, data[2].ErrorLimit)
	}
	data = []analysis.PhaseData{{Profile: "s"}}
	if errorLimits(results.Meta{}, data); data[0].ErrorLimit != 0 {
		t.Errorf("no gates: limit %v", data[0].ErrorLimit)
	}
}

// judgeHeld gives every finished phase that ran a workload one verdict:
// its size's where the cell was sized (the one the report shows), else
// the same rule over the phases, with the plan's error_rate gate as the
// share a held load may fail; an implicit phase is named after its
// workload, as its size is; a failed phase is not judged.
func TestJudgeHeldIsTheSizesVerdict(t *testing.T) {
	sum := func(name string, ok int64) *analysis.Summary {
		return &analysis.Summary{Workload: analysis.Workload{Name: name, Model: "open", TargetRate: 100}, Rate: 100, Requests: 1000,
			Ops: []analysis.Op{{Name: "GET /", Requests: 1000, OK: ok}}}
	}
	failing := &view.Phase{Profile: "m", State: "completed", Workloads: []*analysis.Summary{sum("get", 970)}} // 3 % failed
	sized := &view.Phase{Profile: "s", State: "completed", Workloads: []*analysis.Summary{sum("get", 1000)}}
	broken := &view.Phase{Profile: "l", State: "failed", Workloads: []*analysis.Summary{sum("get", 1000)}}
	sizeVerdict := analysis.Held{Unsustained: []string{"the size's own verdict"}}
	c := &view.Cell{Phases: []*view.Phase{sized, failing, broken}, Insights: &analysis.Insights{Sizes: []analysis.TShirt{{Size: "s", Held: sizeVerdict}}}}
	judgeHeld(c, results.Meta{})
	if sized.Held == nil || sized.Held.Why() != "the size's own verdict" {
		t.Errorf("sized phase: %+v, want its size's verdict", sized.Held)
	}
	if failing.Held == nil || failing.Held.Sustained() || broken.Held != nil {
		t.Errorf("3 %% failed: %+v; failed phase: %+v", failing.Held, broken.Held)
	}
	judgeHeld(c, results.Meta{Extra: WithSLO(nil, []GateSpec{{Expr: "error_rate < 5%"}})})
	if !failing.Held.Sustained() {
		t.Errorf("3 %% failed under an error_rate < 5%% gate: %q", failing.Held.Why())
	}
	implicit := &view.Phase{Implicit: true, Workloads: []*analysis.Summary{sum("http", 1000)}}
	c = &view.Cell{Implicit: true, Phases: []*view.Phase{implicit}, Insights: &analysis.Insights{Sizes: []analysis.TShirt{{Size: "http", Held: sizeVerdict}}}}
	if judgeHeld(c, results.Meta{}); implicit.Held == nil || implicit.Held.Why() != "the size's own verdict" {
		t.Errorf("implicit phase: %+v, want the verdict of its size, named after its workload", implicit.Held)
	}
}
