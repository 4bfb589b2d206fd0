package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/observe"
)

// machineEdge is a 20-second phase of a MinIO perflab started beside the
// generator, the generator listed first, on a machine of 4 GiB: the
// generator at genCPU cores and 200 MiB, minio at minioCPU cores and
// 1 GiB, all steady. cores is the generator's cores_available samples;
// with 0 it has none, and the cores are unknown.
func machineEdge(cores, genCPU, minioCPU float64) *Resources {
	const gib = 1 << 30
	steady := func(v float64) []Point { return series(slices.Repeat([]float64{v}, 20)...) }
	gen := map[string][]Point{observe.CPUCores: steady(genCPU), observe.RSSBytes: steady(200 << 20),
		observe.MachineMemoryBytes: steady(4 * gib)}
	if cores > 0 {
		gen[observe.CoresAvailable] = steady(cores)
	}
	return SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(20e9)},
		Components: []Component{{Name: "perflab", Kind: KindGenerator}, {Name: "minio", Kind: "run"}},
		Series: map[string]map[string][]Point{
			"perflab": gen,
			"minio":   {observe.CPUCores: steady(minioCPU), observe.RSSBytes: steady(1 * gib)},
		},
	})
}

// The machine-bound rule at its edges: the generator is found wherever it
// is listed; a sum of exactly 125 % of the cores is still the machine's
// (only more shows the cores counted were not the machine's); with the
// cores unknown there is no verdict, not even for idle components whose
// CPU sums to 0.
func TestMachineBoundEdges(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		cores, genCPU, minCPU float64
		want                  string // part of the reason; "" when not machine-bound
	}{
		{"generator listed first", 2, 0.55, 1.45, "generator 0.55 + minio 1.45 = 2.00 of 2 cores (≥ 90 %"},
		{"exactly 125 % of the cores", 2, 0.5, 2, "generator 0.50 + minio 2.00 = 2.50 of 2 cores"},
		{"just above 125 % of the cores", 2, 0.5, 2.01, ""},
		{"cores unknown, idle", 0, 0, 0, ""},
		{"cores unknown, busy", 0, 0.55, 1.45, ""},
	} {
		r := machineEdge(tt.cores, tt.genCPU, tt.minCPU)
		if r.MachineBound != (tt.want != "") || !strings.Contains(r.MachineWhy, tt.want) {
			t.Errorf("%s: machine-bound %v (%q); want %v (%q)", tt.name, r.MachineBound, r.MachineWhy, tt.want != "", tt.want)
		}
		warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "machine-bound: ") })
		if warned != (tt.want != "") {
			t.Errorf("%s: warnings %q", tt.name, r.Warnings)
		}
	}
}
