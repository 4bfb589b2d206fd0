package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRoundUp(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	tests := []struct {
		r    Resource
		v    float64
		want string
	}{
		{ResourceCPU, 0, "10m"}, // nothing is never recommended
		{ResourceCPU, -1, "10m"},
		{ResourceCPU, 0.001, "10m"},
		{ResourceCPU, 0.25, "250m"},
		{ResourceCPU, 0.251, "260m"},
		{ResourceCPU, 0.995, "1"},
		{ResourceCPU, 1, "1"},
		{ResourceCPU, 1.0001, "1.05"}, // above one core the step is 50m, written in cores
		{ResourceCPU, 1.2, "1.2"},     // 1.2 × 1000 = 1200.0000000000002 is still 1200m
		{ResourceCPU, 0.29 * 1.25, "370m"},
		{ResourceCPU, 1.5, "1.5"},
		{ResourceCPU, 2.96, "3"},
		{ResourceCPU, 10.62 * 1.25, "13.3"},
		{ResourceMemory, 0, "32Mi"},
		{ResourceMemory, 60e6, "64Mi"}, // 57.2 Mi
		{ResourceMemory, 100 * mib, "128Mi"},
		{ResourceMemory, 128 * mib, "128Mi"},
		{ResourceMemory, 129 * mib, "160Mi"},
		{ResourceMemory, 256 * mib, "256Mi"},
		{ResourceMemory, 257 * mib, "320Mi"},
		{ResourceMemory, 1000 * mib, "1Gi"},
		{ResourceMemory, gib, "1Gi"},
		{ResourceMemory, gib + 2, "1.25Gi"},
		{ResourceMemory, 1.4 * gib, "1.5Gi"},
		{ResourceMemory, 1.6 * gib, "1.75Gi"},
		{ResourceMemory, 4*gib + 1, "4.5Gi"},
		{ResourceMemory, 12.1e9, "11.5Gi"}, // 11.27 GiB
		{ResourceMemory, 16*gib + mib, "17Gi"},
		{ResourceMemory, 16*gib + 1, "16Gi"}, // within a billionth of a step: on it
		{ResourceCPU, math.NaN(), ""},
		{ResourceMemory, math.Inf(1), ""},
	}
	for _, tt := range tests {
		if got := RoundUp(tt.r, tt.v).String(); got != tt.want {
			t.Errorf("RoundUp(%v, %v) = %q, want %q", tt.r, tt.v, got, tt.want)
		}
	}
}

func TestQuantityString(t *testing.T) {
	tests := []struct {
		q    Quantity
		want string
	}{
		{Quantity{ResourceCPU, 12000}, "12"},
		{Quantity{ResourceCPU, 1}, "1m"},
		{Quantity{ResourceCPU, 999}, "999m"},
		{Quantity{ResourceCPU, 4051500}, "4051.5"}, // not "4051500m"
		{Quantity{ResourceCPU, 4051}, "4.051"},
		{Quantity{ResourceMemory, 9 << 27}, "1.125Gi"},
		{Quantity{ResourceMemory, 8288 << 20}, "8288Mi"}, // 8.09375Gi: no exact three decimals
		{Quantity{ResourceMemory, 3 << 29}, "1.5Gi"},
		{Quantity{ResourceMemory, 1 << 29}, "512Mi"}, // not "0.5Gi"
		{Quantity{ResourceMemory, 23968 << 20}, "23968Mi"},
		{Quantity{ResourceMemory, 2048}, "2Ki"},
		{Quantity{ResourceMemory, 1000}, "1000"},
		{Quantity{ResourceMemory, 0}, ""},
	}
	for _, tt := range tests {
		if got := tt.q.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestPercentilesOf(t *testing.T) {
	got := PercentilesOf(seq(1, 100))
	want := Percentiles{N: 100, P50: 50, P90: 90, P95: 95, P99: 99, Max: 100, Avg: 50.5, SD: got.SD}
	if !closeTo(got.SD, math.Sqrt(9999.0/12), 1e-9) { // of 1…n: √((n² − 1) / 12)
		t.Errorf("1…100: SD %v", got.SD)
	}
	if got != want {
		t.Errorf("1…100: %+v, want %+v", got, want)
	}
	// ⌈0.5 × 11⌉ = 6, ⌈0.9 × 11⌉ = 10, ⌈0.95 × 11⌉ = 11.
	got = PercentilesOf(seq(1, 11))
	if got.P50 != 6 || got.P90 != 10 || got.P95 != 11 || got.P99 != 11 {
		t.Errorf("1…11: %+v", got)
	}
	if got := PercentilesOf(seq(1, 9)); got.HasPercentiles() || got.P50 != 0 || got.Max != 9 {
		t.Errorf("1…9: %+v has percentiles", got)
	}
}

// scaled is vs × f.
func scaled(vs []float64, f float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = v * f
	}
	return out
}

func TestSizeStrategies(t *testing.T) {
	const gib = 1 << 30
	in := SizingInput{Component: "ingester",
		CPU:    scaled(seq(1, 100), 0.01),                // P50 0.5, P90 0.9, P95 0.95, P99 0.99, Max 1
		Memory: slices.Repeat([]float64{1.6 * gib}, 100), // every figure 1.6 GiB
	}
	tests := []struct {
		strategy                       string
		cpuReq, cpuLim, memReq, memLim string
		noCPULimit                     bool
		cpuLower, cpuUpper             string
		cpuRule                        string
	}{
		// 0.99 × 1.25 = 1.2375 → 1250m; 1.25 × 1.5 = 1.875 → 1900m.
		// 1.6 GiB × 1.25 = 2 GiB; × 1.5 = 3 GiB.
		{"p99", "1.25", "1.9", "2Gi", "3Gi", false, "", "", "request = P99 × 1.25; limit = request × 1.5"},
		// 0.9 × 1.15 = 1.035 → 1050m; 1.05 × 1.5 = 1.575 → 1600m; bounds
		// 0.5 × 1.15 = 0.575 → 580m and 0.95 × 1.15 = 1.0925 → 1100m.
		// 1.6 GiB × 1.15 = 1.84 GiB → 2 GiB; × 1.5 = 3 GiB.
		{"vpa", "1.05", "1.6", "2Gi", "3Gi", false, "580m", "1.1", "request = P90 × 1.15; limit = request × 1.5; bounds P50 × 1.15, P95 × 1.15"},
		// CPU P95 0.95 → 950m, no limit; memory 1.84 GiB → 2Gi both.
		{"krr", "950m", "", "2Gi", "2Gi", true, "", "", "request = P95; no limit"},
	}
	for _, tt := range tests {
		s, err := ParseStrategy(tt.strategy)
		if err != nil {
			t.Fatal(err)
		}
		sz, err := Size(in, s, DefaultSizingOptions())
		if err != nil {
			t.Fatal(err)
		}
		got := []string{sz.CPU.Request.String(), sz.CPU.Limit.String(), sz.Memory.Request.String(), sz.Memory.Limit.String()}
		if want := []string{tt.cpuReq, tt.cpuLim, tt.memReq, tt.memLim}; !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", tt.strategy, got, want)
		}
		if sz.CPU.NoLimit != tt.noCPULimit || sz.CPU.Lower.String() != tt.cpuLower || sz.CPU.Upper.String() != tt.cpuUpper {
			t.Errorf("%s: no limit %v, bounds %s–%s", tt.strategy, sz.CPU.NoLimit, sz.CPU.Lower, sz.CPU.Upper)
		}
		if sz.CPU.Rule != tt.cpuRule || sz.Strategy != tt.strategy || len(sz.Warnings) > 0 {
			t.Errorf("%s: rule %q, strategy %q, warnings %q", tt.strategy, sz.CPU.Rule, sz.Strategy, sz.Warnings)
		}
	}
}

func TestSizeOptions(t *testing.T) {
	in := SizingInput{Component: "q", CPU: slices.Repeat([]float64{0.4}, 10), Memory: slices.Repeat([]float64{100 << 20}, 10)}
	s, _ := ParseStrategy("p99")
	sz, err := Size(in, s, SizingOptions{Headroom: 0.5, LimitFactor: 2})
	if err != nil {
		t.Fatal(err)
	}
	// 0.4 × 1.5 = 0.6 → 600m, × 2 = 1200m; 100 Mi × 1.5 = 150 Mi → 160Mi, × 2 = 320Mi.
	if got := []string{sz.CPU.Request.String(), sz.CPU.Limit.String(), sz.Memory.Request.String(), sz.Memory.Limit.String()}; !slices.Equal(got, []string{"600m", "1.2", "160Mi", "320Mi"}) {
		t.Errorf("headroom 50 %%, factor 2: %q", got)
	}
	if sz.CPU.Inputs[0] != (BasisFigure{"P99", 0.4}) {
		t.Errorf("inputs %+v", sz.CPU.Inputs)
	}
	if _, err := Size(in, s, SizingOptions{Headroom: -0.1, LimitFactor: 0.5}); err == nil ||
		!strings.Contains(err.Error(), "headroom -0.1") || !strings.Contains(err.Error(), "limit factor 0.5") {
		t.Errorf("bad options: %v", err)
	}
	if _, err := Size(in, Strategy{Name: "made-up"}, DefaultSizingOptions()); err == nil {
		t.Error("an unregistered strategy was accepted")
	}
}

func TestParseStrategyUnknown(t *testing.T) {
	_, err := ParseStrategy("p95")
	if err == nil || err.Error() != `cannot find sizing strategy "p95": known strategies are krr, p99, vpa` {
		t.Errorf("error %v", err)
	}
}

func TestSizeWarnings(t *testing.T) {
	ten := slices.Repeat([]float64{1}, 10)
	tests := []struct {
		name  string
		in    SizingInput
		warn  []string
		noCPU bool
		noMem bool
	}{
		{"few CPU samples", SizingInput{Component: "c", CPU: ten[:9], Memory: ten},
			[]string{"component c has 9 cpu samples in the window: no cpu figure (sizing needs at least 10)"}, true, false},
		{"no memory", SizingInput{Component: "c", CPU: ten},
			[]string{"component c has 0 memory samples"}, false, true},
		{"short window", SizingInput{Component: "c", CPU: ten, Memory: ten, Window: time.Minute, WarmUp: 5 * time.Minute},
			[]string{"the window (1m0s) is shorter than the warm-up (5m0s): c may not have reached its steady state"}, false, false},
		{"restart", SizingInput{Component: "c", CPU: ten, Memory: ten, Restarts: 1},
			[]string{"component c restarted in the window (1 time)"}, false, false},
		{"exit", SizingInput{Component: "c", CPU: ten, Memory: ten, Exited: true},
			[]string{"component c exited in the window"}, false, false},
		{"clean", SizingInput{Component: "c", CPU: ten, Memory: ten, Window: time.Hour, WarmUp: time.Minute}, nil, false, false},
		// a phase stopped within its plan's warm-up has a window that ends
		// before it starts; with the component's warm-up unknown, nothing is
		// said of it
		{"warm-up unknown", SizingInput{Component: "c", CPU: ten, Memory: ten, Window: -30 * time.Second}, nil, false, false},
	}
	s, _ := ParseStrategy(DefaultStrategy)
	for _, tt := range tests {
		sz, err := Size(tt.in, s, DefaultSizingOptions())
		if err != nil {
			t.Fatal(err)
		}
		checkWarnings(t, tt.name, sz.Warnings, tt.warn)
		if sz.CPU.Request.IsZero() != tt.noCPU || sz.Memory.Request.IsZero() != tt.noMem {
			t.Errorf("%s: CPU %q, memory %q", tt.name, sz.CPU.Request, sz.Memory.Request)
		}
	}
}

// checkWarnings fails unless every one of want is part of some warning, and
// there are no warnings when want is empty.
func checkWarnings(t *testing.T, what string, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("%s: no warning %q in %q", what, w, got)
		}
	}
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("%s: unexpected warnings %q", what, got)
	}
}

func TestSizingInputs(t *testing.T) {
	in := threeComponents()
	in.Components[1].Exited = t0.Add(15 * time.Second)
	got := SizingInputs(in, time.Minute)
	if len(got) != 2 || got[0].Component != "a" || got[1].Component != "b" {
		t.Fatalf("inputs %+v, want a and b (not the generator)", got)
	}
	if len(got[0].CPU) != 20 || got[0].Memory[19] != 20<<20 || got[0].Window != 20*time.Second || got[0].WarmUp != time.Minute {
		t.Errorf("a: %+v", got[0])
	}
	if got[0].Exited || !got[1].Exited {
		t.Errorf("exited: a %v, b %v", got[0].Exited, got[1].Exited)
	}
}

// TestSizingEdges (issue 18): a headroom of 0 and a limit factor of 1 are
// valid options; a window as long as the warm-up is not called short.
func TestSizingEdges(t *testing.T) {
	if errs := (SizingOptions{Headroom: 0, LimitFactor: 1}).Validate(); len(errs) != 0 {
		t.Errorf("headroom 0, limit factor 1: %v", errs)
	}
	if ws := windowWarnings(SizingInput{Component: "db", WarmUp: 30 * time.Second, Window: 30 * time.Second}); len(ws) != 0 {
		t.Errorf("a window as long as the warm-up: %q", ws)
	}
}

// The p99 strategy rests on the basis asked for; a P99 of fewer than 100
// samples that is one spike (average 0.27 cores, one sample at 1.2) warns
// that the spike set the size, and P95 or mean + 3 sd rest on more.
func TestSizeBasisAndSpikes(t *testing.T) {
	cpu := make([]float64, 50)
	for i := range cpu {
		cpu[i] = 0.25 + 0.001*float64(i%10)
	}
	cpu[17] = 1.2
	in := SizingInput{Component: "api", CPU: cpu, Memory: slices.Repeat([]float64{100 << 20}, 50)}
	s, _ := ParseStrategy("p99")
	sz, err := Size(in, s, DefaultSizingOptions())
	if err != nil {
		t.Fatal(err)
	}
	if sz.CPU.Request.String() != "1.5" || len(sz.Warnings) != 1 ||
		!strings.HasPrefix(sz.Warnings[0], "component api's cpu P99 is the maximum of its 50 samples (a P99 other than the maximum needs 100), 4.63× their P90: one spike sets its size (average 0.273 cores)") {
		t.Errorf("p99: request %s, warnings %q", sz.CPU.Request, sz.Warnings)
	}
	for basis, want := range map[string]string{BasisP95: "330m", BasisMean3SD: ""} {
		o := DefaultSizingOptions()
		o.Basis = basis
		sz, _ := Size(in, s, o)
		if len(sz.Warnings) != 0 || basis == BasisP95 && sz.CPU.Request.String() != want || !strings.HasPrefix(sz.CPU.Rule, "request = "+map[string]string{BasisP95: "P95", BasisMean3SD: "(mean + 3 sd)"}[basis]) {
			t.Errorf("basis %s: request %s (%s), warnings %q", basis, sz.CPU.Request, sz.CPU.Rule, sz.Warnings)
		}
	}
	o := DefaultSizingOptions()
	o.Basis = "p42"
	if _, err := Size(in, s, o); err == nil || !strings.Contains(err.Error(), `basis "p42": want p99, p95 or mean+3sd`) {
		t.Errorf("basis p42: %v", err)
	}
}
