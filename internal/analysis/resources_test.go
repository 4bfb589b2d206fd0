package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// seq is lo, lo+1, …, hi.
func seq(lo, hi int) []float64 {
	var vs []float64
	for v := lo; v <= hi; v++ {
		vs = append(vs, float64(v))
	}
	return vs
}

func TestStatOf(t *testing.T) {
	tests := []struct {
		name string
		vs   []float64
		want Stat
	}{
		{"empty", nil, Stat{}},
		{"one value: no P99", []float64{7}, Stat{N: 1, Max: 7, Avg: 7}},
		{"9 values: no P99", seq(1, 9), Stat{N: 9, Max: 9, Avg: 5}},
		// rank ⌈0.99 × 10⌉ = 10: with ≤ 100 samples the P99 is the maximum.
		{"10 values", seq(1, 10), Stat{N: 10, P99: 10, Max: 10, Avg: 5.5}},
		{"10 values, unsorted", []float64{5, 1, 10, 2, 9, 3, 8, 4, 7, 6}, Stat{N: 10, P99: 10, Max: 10, Avg: 5.5}},
		{"100 values", seq(1, 100), Stat{N: 100, P99: 99, Max: 100, Avg: 50.5}},
		// rank ⌈0.99 × 101⌉ = ⌈99.99⌉ = 100.
		{"101 values", seq(1, 101), Stat{N: 101, P99: 100, Max: 101, Avg: 51}},
		// rank ⌈0.99 × 200⌉ = 198.
		{"200 values", seq(1, 200), Stat{N: 200, P99: 198, Max: 200, Avg: 100.5}},
		// one spike in 1000: rank 990 is still the baseline.
		{"a spike", append(slices.Repeat([]float64{1}, 999), 50), Stat{N: 1000, P99: 1, Max: 50, Avg: 1.049}},
	}
	for _, tt := range tests {
		got := StatOf(tt.vs)
		if got.N != tt.want.N || got.P99 != tt.want.P99 || got.Max != tt.want.Max || !near(got.Avg, tt.want.Avg) {
			t.Errorf("%s: StatOf = %+v, want %+v", tt.name, got, tt.want)
		}
		if got.HasP99() != (tt.want.N >= MinSamplesP99) {
			t.Errorf("%s: HasP99 = %v with %d samples", tt.name, got.HasP99(), got.N)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

var t0 = time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC)

// series is one point per second at t0+1s … t0+len(vs)s.
func series(vs ...float64) []Point {
	ps := make([]Point, len(vs))
	for i, v := range vs {
		ps[i] = Point{T: t0.Add(time.Duration(i+1) * time.Second), V: v}
	}
	return ps
}

func TestPointsInWindow(t *testing.T) {
	ps := series(seq(1, 10)...) // at 1 s … 10 s
	tests := []struct {
		from, to int // seconds after t0
		want     []float64
	}{
		{0, 10, seq(1, 10)},
		{3, 6, seq(4, 6)}, // the start is open, the end closed
		{10, 20, nil},
		{-5, 0, nil},
	}
	for _, tt := range tests {
		w := Window{Start: t0.Add(time.Duration(tt.from) * time.Second), End: t0.Add(time.Duration(tt.to) * time.Second)}
		if got := values(pointsIn(ps, w)); !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 {
			t.Errorf("(%d s, %d s]: %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

// threeComponents is 20 s of samples: a's memory rises 1…20 while b's falls
// 20…1, so every component's P99 is 20 but their sum is always 21; the
// generator uses 1 core of 2. a and b are attached (on machines of their
// own: their 20 cores are not the generator's machine's, which is not
// machine-bound).
func threeComponents() ResourceInput {
	const mib = 1 << 20
	rise, fall := seq(1, 20), seq(1, 20)
	slices.Reverse(fall)
	scale := func(vs []float64, k float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			out[i] = v * k
		}
		return out
	}
	return ResourceInput{
		Window: Window{Start: t0, End: t0.Add(20 * time.Second)},
		Components: []Component{
			{Name: "a", Group: "ingester", Kind: "attach"}, {Name: "b", Group: "ingester", Kind: "attach"},
			{Name: "perflab", Kind: KindGenerator},
		},
		Series: map[string]map[string][]Point{
			"a": {"rss_bytes": series(scale(rise, mib)...), "cpu_cores": series(rise...),
				"go_heap_inuse_bytes": series(scale(rise, mib/2)...), "gc_per_min": series(scale(rise, 0.5)...),
				"disk_bytes": series(scale(rise, 1000)...)},
			"b": {"rss_bytes": series(scale(fall, mib)...), "cpu_cores": series(fall...)},
			"perflab": {"cpu_cores": series(slices.Repeat([]float64{1}, 20)...),
				"cores_available": series(slices.Repeat([]float64{2}, 20)...)},
		},
	}
}

func TestSummarizeResources(t *testing.T) {
	res := SummarizeResources(threeComponents())
	const mib = 1 << 20
	if res.Ticks != 20 || res.Step != time.Second {
		t.Errorf("%d ticks every %v, want 20 every 1s", res.Ticks, res.Step)
	}
	a, b, gen := res.Components[0], res.Components[1], res.Components[2]
	checkStat(t, "a memory", a.Memory, Stat{N: 20, P99: 20 * mib, Max: 20 * mib, Avg: 10.5 * mib})
	checkStat(t, "b cpu", b.CPU, Stat{N: 20, P99: 20, Max: 20, Avg: 10.5})
	checkStat(t, "a heap", a.Heap, Stat{N: 20, P99: 10 * mib, Max: 10 * mib, Avg: 5.25 * mib})
	checkStat(t, "a gc", a.GC, Stat{N: 20, P99: 10, Max: 10, Avg: 5.25})
	checkStat(t, "b heap", b.Heap, Stat{})
	if d, ok := a.Observed["disk_bytes"]; !ok || d.End != 20000 || d.Stat.N != 20 || d.Stat.Max != 20000 {
		t.Errorf("disk a %+v", a.Observed)
	}
	if _, ok := b.Observed["disk_bytes"]; ok || len(res.Declared) != 1 || res.Declared[0].Name != "disk_bytes" {
		t.Errorf("disk b %+v, declared %+v", b.Observed, res.Declared)
	}
	if a.MemoryMetric != "rss_bytes" || a.CPUMetric != "cpu_cores" || a.Group != "ingester" {
		t.Errorf("a: memory from %q, cpu from %q, group %q", a.MemoryMetric, a.CPUMetric, a.Group)
	}
	// The generator is not in the totals.
	if res.Memory.Components != 2 || res.CPU.Components != 2 {
		t.Errorf("totals over %d and %d components, want 2", res.Memory.Components, res.CPU.Components)
	}
	checkStat(t, "memory sum of P99s", res.Memory.Sum, Stat{N: 20, P99: 40 * mib, Max: 40 * mib, Avg: 21 * mib})
	checkStat(t, "memory summed series", res.Memory.Summed, Stat{N: 20, P99: 21 * mib, Max: 21 * mib, Avg: 21 * mib})
	checkStat(t, "cpu summed series", res.CPU.Summed, Stat{N: 20, P99: 21, Max: 21, Avg: 21})
	checkStat(t, "generator cpu", gen.CPU, Stat{N: 20, P99: 1, Max: 1, Avg: 1})
	if res.ClientBound || res.CoresAvailable != 2 || len(res.Warnings) != 0 {
		t.Errorf("client-bound %v, %v cores, warnings %q", res.ClientBound, res.CoresAvailable, res.Warnings)
	}
}

func checkStat(t *testing.T, what string, got, want Stat) {
	t.Helper()
	if got.N != want.N || got.P99 != want.P99 || got.Max != want.Max || !near(got.Avg, want.Avg) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func TestResourceWarnings(t *testing.T) {
	tests := []struct {
		name   string
		change func(in *ResourceInput)
		warn   []string // each must appear in some warning
		bound  bool
	}{
		{"b exits after 15 s", func(in *ResourceInput) {
			in.Components[1].Exited, in.Components[1].ExitText = t0.Add(15500*time.Millisecond), "exit status 2"
			in.Series["b"]["rss_bytes"] = in.Series["b"]["rss_bytes"][:15]
		}, []string{"component b exited at 17:24:15 UTC (exit status 2), during the window", "the summed memory series has 15 of the window's 20 sample times"}, false},
		{"a exits before the window", func(in *ResourceInput) {
			in.Components[0].Exited = t0.Add(-time.Second)
			delete(in.Series, "a")
		}, []string{"component a exited at 17:23:59 UTC (no exit status), before the window", "component a has no samples in the window"}, false},
		{"short window", func(in *ResourceInput) { in.Window.End = t0.Add(5 * time.Second) },
			[]string{"only 5 sample times in the window: a P99 needs at least 10"}, false},
		{"no CPU for b", func(in *ResourceInput) { delete(in.Series["b"], "cpu_cores") },
			[]string{"component b has no CPU samples in the window; the CPU totals leave it out"}, false},
		{"generator at 1.8 of 2 cores", func(in *ResourceInput) {
			in.Series["perflab"]["cpu_cores"] = series(slices.Repeat([]float64{1.8}, 20)...)
		}, []string{"client-bound: generator CPU P99 1.8 of 2 cores (≥ 90 %)"}, true},
		{"generator at 1.7 of 2 cores", func(in *ResourceInput) {
			in.Series["perflab"]["cpu_cores"] = series(slices.Repeat([]float64{1.7}, 20)...)
		}, nil, false},
		{"cores from the fallback", func(in *ResourceInput) {
			delete(in.Series["perflab"], "cores_available")
			in.CoresAvailable = 1
		}, []string{"client-bound: generator CPU P99 1 of 1 cores (≥ 90 %)"}, true},
	}
	for _, tt := range tests {
		in := threeComponents()
		tt.change(&in)
		res := SummarizeResources(in)
		for _, w := range tt.warn {
			if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
				t.Errorf("%s: no warning %q in %q", tt.name, w, res.Warnings)
			}
		}
		if len(tt.warn) == 0 && len(res.Warnings) > 0 {
			t.Errorf("%s: unexpected warnings %q", tt.name, res.Warnings)
		}
		if res.ClientBound != tt.bound {
			t.Errorf("%s: client-bound %v, want %v", tt.name, res.ClientBound, tt.bound)
		}
	}
}

func TestSummedSeriesOnlyWhereAllHaveValues(t *testing.T) {
	a := series(1, 2, 3, 4)
	b := []Point{{T: t0.Add(2 * time.Second), V: 10}, {T: t0.Add(4 * time.Second), V: 20}}
	if got := summedSeries([][]Point{a, b}); !slices.Equal(got, []float64{12, 24}) {
		t.Errorf("summed = %v, want [12 24]", got)
	}
	if got := summedSeries(nil); got != nil {
		t.Errorf("summed of nothing = %v", got)
	}
}

func TestMarkClientBound(t *testing.T) {
	behind := Summarize(Workload{Model: "open", Scheduled: 90, Unissued: 10}, nil)
	sums := []*Summary{{}, behind}
	MarkClientBound(&Resources{ClientBound: false}, sums)
	MarkClientBound(nil, sums)
	if sums[0].ClientBound || sums[1].ClientWhy != "the generator issued 90 of the 100 arrivals due (10 not issued, 10.0 %)" {
		t.Fatalf("marked without a verdict: %+v", sums)
	}
	MarkClientBound(&Resources{ClientBound: true, GeneratorCPU: 3.8, CoresAvailable: 4}, sums)
	for i, s := range sums {
		if !s.ClientBound || !strings.Contains(s.ClientWhy, "generator CPU P99 3.8 of 4 cores") || !hasWarning(s, "client-bound: ") {
			t.Errorf("summary %d: %+v", i, s)
		}
		n := 0
		for _, w := range s.Warnings {
			if strings.HasPrefix(w, "client-bound: ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("summary %d has %d client-bound warnings: %q", i, n, s.Warnings)
		}
	}
	if want := "the generator issued 90 of the 100 arrivals due (10 not issued, 10.0 %); generator CPU P99 3.8 of 4 cores (≥ 90 %)"; sums[1].ClientWhy != want {
		t.Errorf("reasons %q, want %q", sums[1].ClientWhy, want)
	}
}

func TestAllComponentsAddsUnlistedSeries(t *testing.T) {
	in := ResourceInput{Components: []Component{{Name: "x"}}, Series: map[string]map[string][]Point{"z": {}, "y": {}, "x": {}}}
	var names []string
	for _, c := range allComponents(in) {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"x", "y", "z"}) {
		t.Errorf("components %v", names)
	}
}

func TestFewSamplesOfOneComponent(t *testing.T) {
	in := threeComponents()
	in.Series["b"]["rss_bytes"] = in.Series["b"]["rss_bytes"][12:] // 8 samples
	res := SummarizeResources(in)
	if res.Components[1].Memory.HasP99() || res.Memory.Sum.HasP99() {
		t.Errorf("b's memory or the sum has a P99 from 8 samples: %+v %+v", res.Components[1].Memory, res.Memory.Sum)
	}
	want := "component b has only 8 memory samples in the window: no P99"
	if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, want) }) {
		t.Errorf("no warning %q in %q", want, res.Warnings)
	}
}

// BenchmarkSummarizeResources summarises one 75-minute phase of 10
// components × 15 metrics sampled every second (675,000 points).
func BenchmarkSummarizeResources(b *testing.B) {
	const n = 75 * 60
	in := ResourceInput{Window: Window{Start: t0, End: t0.Add(n * time.Second)}, Series: map[string]map[string][]Point{}}
	for c := range 10 {
		name := string(rune('a' + c))
		in.Components = append(in.Components, Component{Name: name, Kind: "run"})
		in.Series[name] = map[string][]Point{}
		for m := range 15 {
			metric := []string{"rss_bytes", "cpu_cores", "go_heap_inuse_bytes", "gc_per_min", "disk_bytes"}[m%5]
			if m >= 5 {
				metric = "metric:" + string(rune('a'+m))
			}
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64((i*7919 + m) % 1000)
			}
			in.Series[name][metric] = series(vs...)
		}
	}
	for b.Loop() {
		SummarizeResources(in)
	}
}

func TestMarkWorkersBound(t *testing.T) {
	sums := []*Summary{{}, {}}
	MarkWorkersBound(sums, nil)
	if sums[0].ClientBound || len(sums[0].Warnings) > 0 {
		t.Fatal("marked without a client-bound worker")
	}
	MarkWorkersBound(sums, []string{"worker 2 (node-c): its CPU p99 was 1.9 of the 2 cores it could use"})
	for _, s := range sums {
		if !s.ClientBound || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "client-bound: worker 2 (node-c)") {
			t.Errorf("%+v", s)
		}
	}
}

// TestExitAfterTheWindowIsNoExitInIt: a component that exited after the
// window (in a later phase, or as its cell ended) gets no "exited"
// warning on this window's figures, nor a sizing warning; one that exited
// inside it gets both.
func TestExitAfterTheWindowIsNoExitInIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		at   time.Duration // after t0; the window is 0–20 s
		warn bool
	}{
		{"exits at 15 s", 15 * time.Second, true},
		{"exits at 20 s, the window's end", 20 * time.Second, true},
		{"exits at 21 s", 21 * time.Second, false},
		{"exits a minute later", 80 * time.Second, false},
	} {
		in := threeComponents()
		in.Components[1].Exited, in.Components[1].ExitText = t0.Add(tt.at), "exit status 1"
		res := SummarizeResources(in)
		warned := slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.HasPrefix(s, "component b exited at ") })
		if warned != tt.warn {
			t.Errorf("%s: warned %v, want %v: %q", tt.name, warned, tt.warn, res.Warnings)
		}
		if si := SizingInputs(in, 0); si[1].Exited != tt.warn {
			t.Errorf("%s: sizing input exited %v, want %v", tt.name, si[1].Exited, tt.warn)
		}
	}
}

// A metric sampled only outside the window is not among the component's
// figures (summary.json's metrics): no entry of 0 samples.
func TestMetricOutsideTheWindowIsLeftOut(t *testing.T) {
	late := []Point{{T: t0.Add(30 * time.Second), V: 64 << 20}}
	res := SummarizeResources(ResourceInput{Window: Window{Start: t0, End: t0.Add(10 * time.Second)},
		Components: []Component{{Name: "db", Kind: "run"}},
		Series:     map[string]map[string][]Point{"db": {"cpu_cores": series(seq(1, 10)...), "go_heap_inuse_bytes": late}}})
	if _, ok := res.Components[0].Metrics["go_heap_inuse_bytes"]; ok || len(res.Components[0].Metrics) != 1 {
		t.Errorf("metrics %+v, want cpu_cores alone", res.Components[0].Metrics)
	}
}
