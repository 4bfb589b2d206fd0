package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// machineResources is a 20-second phase of a MinIO perflab started (or
// attached to: kind) beside the generator on a 2-core machine of 4 GiB:
// minio at minioCPU cores and minioMem bytes, the generator at 0.55 cores
// and 200 MiB, each steady but for one sample in which both are lower.
func machineResources(kind string, minioCPU, minioMem float64) *Resources {
	const gib = 1 << 30
	steady := func(v float64) []Point {
		vs := slices.Repeat([]float64{v}, 20)
		vs[3] = v / 2
		return series(vs...)
	}
	return SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(20e9)},
		Components: []Component{{Name: "minio", Kind: kind}, {Name: "perflab", Kind: KindGenerator}},
		Series: map[string]map[string][]Point{
			"minio": {observe.CPUCores: steady(minioCPU), observe.RSSBytes: steady(minioMem)},
			"perflab": {observe.CPUCores: steady(0.55), observe.RSSBytes: steady(200 << 20),
				observe.CoresAvailable: steady(2), observe.MachineMemoryBytes: series(slices.Repeat([]float64{4 * gib}, 20)...)},
		},
	})
}

// The generator and the components perflab started filling the machine's
// cores together make the phase machine-bound, naming each one's part;
// neither alone is at its limit, so the phase is not client-bound.
// Below 90 % together, or with the target attached (it may run
// elsewhere), it is not.
func TestMachineBound(t *testing.T) {
	const gib = 1 << 30
	for _, tt := range []struct {
		name     string
		kind     string
		cpu, mem float64
		want     string // part of the reason; "" when not machine-bound
	}{
		{"CPU", "run", 1.45, 1 * gib, "generator 0.55 + minio 1.45 = 2.00 of 2 cores (≥ 90 %; the P99 of their summed CPU, split at that sample)"},
		{"CPU at 90 %", "run", 1.25, 1 * gib, "generator 0.55 + minio 1.25 = 1.80 of 2 cores"},
		{"CPU below 90 %", "run", 1.2, 1 * gib, ""},
		// 2.55 cores of 2: the generator's 2 cores are not the machine's.
		{"CPU beyond the cores counted", "run", 2, 1 * gib, ""},
		{"attached", "attach", 1.45, 1 * gib, ""},
		{"read from Prometheus", "prometheus", 1.45, 1 * gib, ""},
		{"memory", "run", 0.5, 3.5 * gib, "generator 200 MiB + minio 3.5 GiB = 3.7 GiB of the machine's 4 GiB (≥ 90 %; the P99 of their summed memory, split at that sample)"},
		{"memory below 90 %", "run", 0.5, 3.3 * gib, ""},
	} {
		r := machineResources(tt.kind, tt.cpu, tt.mem)
		if r.MachineBound != (tt.want != "") || !strings.Contains(r.MachineWhy, tt.want) || r.ClientBound {
			t.Errorf("%s: machine-bound %v (%q), client-bound %v; want %v (%q)", tt.name, r.MachineBound, r.MachineWhy, r.ClientBound, tt.want != "", tt.want)
		}
		warned := slices.ContainsFunc(r.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "machine-bound: ") && strings.Contains(w, tt.want) && strings.Contains(w, "run the generator on another machine")
		})
		if warned != (tt.want != "") {
			t.Errorf("%s: warnings %q", tt.name, r.Warnings)
		}
	}
}

// A machine-bound profile's size is marked and left out of the fits,
// with an observation that says where the generator belongs.
func TestCellInsightsLeaveMachineBoundOut(t *testing.T) {
	xl := insightPhase(t, "xl", t0.Add(3*time.Minute), 500, 0.5, 400)
	xl.Resources.MachineBound, xl.Resources.MachineWhy = true, "generator 0.55 + app 1.45 = 2.00 of 2 cores (≥ 90 %)"
	in, err := CellInsights(append(threePhases(t), xl), DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if h := in.Sizes[3].Held; !h.Sustained() || h.Fits() || h.MachineBound == "" || in.Sizes[2].Held.MachineBound != "" {
		t.Errorf("held: %+v, %+v", in.Sizes[2].Held, h)
	}
	if app := in.Scaling[0]; len(app.Points) != 3 || !closeTo(app.Fit.Slope, 0.001, 1e-9) {
		t.Errorf("app CPU fit over %d points: %+v", len(app.Points), app.Fit)
	}
	if !slices.ContainsFunc(in.Observations, func(o Observation) bool {
		return o.Kind == ObsMachineBound && strings.Contains(o.Text, "in xl the machine was the limit (machine-bound): generator 0.55 + app 1.45") &&
			strings.Contains(o.Text, "the generator belongs on another machine")
	}) {
		t.Errorf("observations %+v", in.Observations)
	}
}
