package analysis

import (
	"fmt"
	"slices"
	"testing"
)

// sizeOf sizes a component whose every CPU and memory sample is cpu cores
// and mem bytes.
func sizeOf(t *testing.T, strategy, name string, cpu, mem float64, n int) Sizing {
	t.Helper()
	s, err := ParseStrategy(strategy)
	if err != nil {
		t.Fatal(err)
	}
	sz, err := Size(SizingInput{Component: name, CPU: slices.Repeat([]float64{cpu}, n),
		Memory: slices.Repeat([]float64{mem}, n)}, s, DefaultSizingOptions())
	if err != nil {
		t.Fatal(err)
	}
	return sz
}

func TestTShirtSizes(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	ts := TShirtSizes([]SizeProfile{{Size: "XS", Load: "~100 GB/day", Sizings: []Sizing{
		// 1.2 × 1.25 = 1.5 → 1500m, limit 2250m; 6.4 GiB × 1.25 = 8 GiB, limit 12Gi.
		sizeOf(t, "p99", "ingester", 1.2, 6.4*gib, 100),
		// 0.16 × 1.25 = 0.2 → 200m, limit 300m; 60 MB × 1.25 = 71.5 Mi → 96Mi, limit 144 Mi → 160Mi.
		sizeOf(t, "p99", "distributor", 0.16, 60e6, 100),
	}}})
	if len(ts) != 1 {
		t.Fatalf("%d sizes", len(ts))
	}
	x := ts[0]
	want := []string{"1.5", "2.25", "8Gi", "12Gi", "200m", "300m", "96Mi", "160Mi", "1.7", "2.55", "8288Mi", "12448Mi"}
	var got []string
	for _, r := range append(slices.Clone(x.Components), x.Total) {
		got = append(got, r.CPURequest.String(), r.CPULimit.String(), r.MemoryRequest.String(), r.MemoryLimit.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q,\nwant %q", got, want)
	}
	if x.Strategy != "p99" || x.Total.Component != TotalComponent || x.Total.Size != "XS" || x.Components[1].Load != "~100 GB/day" || len(x.Warnings) > 0 {
		t.Errorf("size %+v", x)
	}
	if x.Total.MemoryRequest.Value() != 8*gib+96*mib {
		t.Errorf("total memory request %v", x.Total.MemoryRequest.Value())
	}
	y, err := x.Components[0].YAML()
	if err != nil {
		t.Fatal(err)
	}
	const wantRow = `resources:
  requests:
    cpu: "1.5"
    memory: 8Gi
  limits:
    cpu: "2.25"
    memory: 12Gi
`
	if string(y) != wantRow {
		t.Errorf("row YAML:\n%s\nwant:\n%s", y, wantRow)
	}
	y, err = x.YAML()
	if err != nil {
		t.Fatal(err)
	}
	const wantSize = `ingester:
  resources:
    requests:
      cpu: "1.5"
      memory: 8Gi
    limits:
      cpu: "2.25"
      memory: 12Gi
distributor:
  resources:
    requests:
      cpu: 200m
      memory: 96Mi
    limits:
      cpu: 300m
      memory: 160Mi
`
	if string(y) != wantSize {
		t.Errorf("size YAML:\n%s\nwant:\n%s", y, wantSize)
	}
}

func TestTShirtWholeCoresAreQuoted(t *testing.T) {
	// 0.8 × 1.25 = 1 core exactly: "1" must stay a string for the YAML to
	// read back the same. 1 GiB × 1.25 = 1280 Mi; × 1.5 = 1920 Mi → 2Gi.
	row := TShirtSizes([]SizeProfile{{Size: "S", Sizings: []Sizing{sizeOf(t, "p99", "q", 0.8, 1<<30, 10)}}})[0].Components[0]
	y, err := row.YAML()
	if err != nil {
		t.Fatal(err)
	}
	const want = "resources:\n  requests:\n    cpu: \"1\"\n    memory: 1.25Gi\n  limits:\n    cpu: \"1.5\"\n    memory: 2Gi\n"
	if string(y) != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", y, want)
	}
}

func TestTShirtPartialTotals(t *testing.T) {
	ts := TShirtSizes([]SizeProfile{{Size: "M", Sizings: []Sizing{
		sizeOf(t, "krr", "ingester", 2, 1<<30, 100),
		sizeOf(t, "krr", "querier", 1, 1<<30, 5), // too few samples: no figures
	}}})[0]
	if !ts.Total.NoCPULimit || !ts.Total.CPULimit.IsZero() || !ts.Total.CPURequest.IsZero() || !ts.Total.MemoryLimit.IsZero() {
		t.Errorf("total %+v", ts.Total)
	}
	checkWarnings(t, "partial", ts.Warnings, []string{
		"component querier has 5 cpu samples",
		"size M: no total CPU request, because querier has none",
		"size M: no total memory limit, because querier has none",
	})
	y, err := ts.YAML()
	if err != nil {
		t.Fatal(err)
	}
	// krr: no CPU limit; querier: nothing to say.
	const want = "ingester:\n  resources:\n    requests:\n      cpu: \"2\"\n      memory: 1.25Gi\n    limits:\n      memory: 1.25Gi\nquerier:\n  resources: {}\n"
	if string(y) != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", y, want)
	}
}

// TestTShirtVPABounds: a vpa size carries each component's bounds and
// their sum; a component without samples leaves the total without
// bounds; other strategies have none.
func TestTShirtVPABounds(t *testing.T) {
	const gib = 1 << 30
	// Constant samples: P50 = P90 = P95, so each bound equals the request.
	// CPU 1.2 × 1.15 = 1.38 → 1400m (50m steps above a core); 0.16 × 1.15 =
	// 0.184 → 190m; the total upper bound is 1590m.
	ing, dis := sizeOf(t, "vpa", "ingester", 1.2, 6.4*gib, 100), sizeOf(t, "vpa", "distributor", 0.16, 60e6, 100)
	x := TShirtSizes([]SizeProfile{{Size: "XS", Sizings: []Sizing{ing, dis}}})[0]
	if !x.HasBounds() || !x.Total.HasBounds() {
		t.Fatalf("no bounds: %+v", x)
	}
	r := x.Components[0]
	if r.CPULower.String() != "1.4" || r.CPUUpper.String() != "1.4" || r.CPULower != r.CPURequest || r.MemoryUpper != r.MemoryRequest {
		t.Errorf("ingester bounds %s–%s, %s–%s; requests %s, %s", r.CPULower, r.CPUUpper, r.MemoryLower, r.MemoryUpper, r.CPURequest, r.MemoryRequest)
	}
	if got, want := x.Total.CPUUpper.String(), "1.59"; got != want || x.Total.MemoryLower.Amount != ing.Memory.Lower.Amount+dis.Memory.Lower.Amount {
		t.Errorf("total CPU upper %s, want %s; memory lower %v", got, want, x.Total.MemoryLower)
	}
	// Different lower and upper bounds: P50 0.5, P95 0.95 of 0.01 … 1.
	spread, err := Size(SizingInput{Component: "q", CPU: scaledSeq(100, 0.01), Memory: scaledSeq(100, 1<<20)}, mustStrategy(t, "vpa"), DefaultSizingOptions())
	if err != nil {
		t.Fatal(err)
	}
	q := TShirtSizes([]SizeProfile{{Size: "S", Sizings: []Sizing{spread, sizeOf(t, "vpa", "empty", 1, 1, 5)}}})[0]
	if c := q.Components[0]; c.CPULower.String() != "580m" || c.CPURequest.String() != "1.05" || c.CPUUpper.String() != "1.1" {
		t.Errorf("q: %s ≤ %s ≤ %s", c.CPULower, c.CPURequest, c.CPUUpper)
	}
	if !q.HasBounds() || q.Total.HasBounds() || !q.Total.CPULower.IsZero() {
		t.Errorf("a total with a component lacking bounds: %+v", q.Total)
	}
	if p := TShirtSizes([]SizeProfile{{Size: "S", Sizings: []Sizing{sizeOf(t, "p99", "a", 1, gib, 100)}}})[0]; p.HasBounds() || p.Total.HasBounds() {
		t.Errorf("p99 has bounds: %+v", p)
	}
}

func scaledSeq(n int, f float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i+1) * f
	}
	return out
}

func mustStrategy(t *testing.T, name string) Strategy {
	t.Helper()
	s, err := ParseStrategy(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A size names its strategy when every component was sized by it, the
// one component alone too, and none when they differ.
func TestTShirtStrategy(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		strategies []string
		want       string
	}{
		{[]string{"p99"}, "p99"},
		{[]string{"vpa", "vpa"}, "vpa"},
		{[]string{"p99", "vpa"}, ""},
		{[]string{"vpa", "p99", "p99"}, ""},
	} {
		var sizings []Sizing
		for i, s := range tc.strategies {
			sizings = append(sizings, sizeOf(t, s, fmt.Sprintf("c%d", i), 1, gib, 100))
		}
		if got := TShirtSizes([]SizeProfile{{Size: "S", Sizings: sizings}})[0].Strategy; got != tc.want {
			t.Errorf("%q: strategy %q, want %q", tc.strategies, got, tc.want)
		}
	}
}
