package analysis

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// interleaved makes n one-second intervals of two operations, "direct: x"
// and "gateway: x", each with perSide latencies per interval: the direct
// ones normal around 5 ms (sd 0.3 ms) plus drift(i), the gateway's the
// same plus added.
func interleaved(n, perSide int, added time.Duration, drift func(i int) time.Duration, seed uint64) []*stats.Interval {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := ovSides(n, func(int, int) int { return perSide }, func(i, k int) time.Duration {
		d := 5*time.Millisecond + time.Duration(rng.NormFloat64()*300e3) + drift(i)
		if k == 1 {
			d += added
		}
		return d
	})
	for _, iv := range out {
		for _, st := range iv.Ops {
			st.BytesSent, st.BytesRecv = int64(130*perSide), int64(1370*perSide)
		}
	}
	return out
}

// ovSides makes n one-second intervals of "direct: x" (side 0) and
// "gateway: x" (side 1): side k of interval i has count(i, k) successful
// requests, each taking lat(i, k), asked once per request.
func ovSides(n int, count func(i, k int) int, lat func(i, k int) time.Duration) []*stats.Interval {
	t0 := time.Unix(2000, 0)
	var out []*stats.Interval
	for i := range n {
		iv := &stats.Interval{Index: i, Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
			Ops: map[string]*stats.OpStats{}, Lag: stats.NewHist()}
		for k, op := range []string{"direct: x", "gateway: x"} {
			st := stats.NewOpStats()
			c := count(i, k)
			for range c {
				d := lat(i, k) // once per request: it may draw a random one
				st.Latency.Record(d)
				st.Service.Record(d)
			}
			st.Classes[stats.OK] = int64(c)
			iv.Ops[op] = st
		}
		out = append(out, iv)
	}
	return out
}

func overheadOf(ivs []*stats.Interval, res *Resources, component string) *Overhead {
	w := Workload{Name: "p/chat", Model: "open", Window: Window{Start: ivs[0].Start, End: ivs[len(ivs)-1].End, Rule: "test"}}
	s := Summarize(w, ivs)
	return GatewayOverhead(OverheadInput{Summary: s, Intervals: ivs, Direct: "direct: x", Gateway: "gateway: x",
		Component: component, Resources: res}, DefaultBootstrap())
}

func noDrift(int) time.Duration { return 0 }

func TestGatewayOverheadMeasuresTheAddedLatency(t *testing.T) {
	ov := overheadOf(interleaved(30, 200, 2*time.Millisecond, noDrift, 1), nil, "")
	if ov.Intervals != 30 || ov.Batches != 5 || len(ov.Added) != 3 {
		t.Fatalf("%d intervals, %d batches, %d quantiles", ov.Intervals, ov.Batches, len(ov.Added))
	}
	for _, a := range ov.Added {
		if !a.HasInterval || a.Significance != Significant || a.Low > 2*time.Millisecond || a.High < 2*time.Millisecond-50*time.Microsecond ||
			a.Value < 1900*time.Microsecond || a.Value > 2100*time.Microsecond || a.Value != a.Gateway-a.Direct {
			t.Errorf("p%s: %v in [%v, %v] (%v), want about 2ms, significant", quantileName(a.Quantile), a.Value, a.Low, a.High, a.Significance)
		}
	}
	d, g := ov.Direct, ov.Gateway
	if d.Requests != 6000 || g.OK != 6000 || d.SuccessRate != 1 || d.RequestBytes != 130 || g.ResponseBytes != 1370 || g.Op != "gateway: x" {
		t.Errorf("sides %+v, %+v", d, g)
	}
	if !strings.Contains(ov.Method, "paired bootstrap") || !strings.Contains(ov.Method, "seed 1") {
		t.Errorf("method %q", ov.Method)
	}
	if len(ov.Warnings) != 1 || !strings.Contains(ov.Warnings[0], "no gateway component") {
		t.Errorf("warnings %q", ov.Warnings)
	}
	again := overheadOf(interleaved(30, 200, 2*time.Millisecond, noDrift, 1), nil, "")
	if again.Added[2] != ov.Added[2] {
		t.Errorf("not deterministic: %+v then %+v", ov.Added[2], again.Added[2])
	}
}

// A gateway that adds nothing is "~": the interval includes 0.
func TestGatewayOverheadOfNothingIsNotSignificant(t *testing.T) {
	ov := overheadOf(interleaved(30, 200, 0, noDrift, 2), nil, "")
	if a := ov.Added[0]; !a.HasInterval || a.Significance != NotSignificant || a.Low > 0 || a.High < 0 {
		t.Errorf("p50 %v in [%v, %v] %v, want an interval around 0", a.Value, a.Low, a.High, a.Significance)
	}
}

// The machine slowing down for both sides alike (a drift of 0.2 ms per
// second, 6 ms over the run) does not widen the interval: the resampled
// batches are the same on both sides.
func TestGatewayOverheadIsPaired(t *testing.T) {
	drift := func(i int) time.Duration { return time.Duration(i) * 200 * time.Microsecond }
	ov := overheadOf(interleaved(30, 200, time.Millisecond, drift, 3), nil, "")
	a := ov.Added[0]
	if a.High-a.Low > 300*time.Microsecond || a.Low > time.Millisecond || a.High < time.Millisecond-50*time.Microsecond {
		t.Errorf("p50 %v in [%v, %v]: want a narrow interval around 1ms", a.Value, a.Low, a.High)
	}
	// Without pairing the same data gives an interval several ms wide.
	ivs := interleaved(30, 200, time.Millisecond, drift, 3)
	c := CompareLatency(LatencySide{Intervals: opLatencies(ivs, "direct: x")}, LatencySide{Intervals: opLatencies(ivs, "gateway: x")}, 0.5, DefaultBootstrap())
	if width := (c.Ratio.High - c.Ratio.Low) * c.A.Seconds(); width < 0.002 {
		t.Errorf("unpaired interval %.2f ms wide; the test's drift is too small to show pairing", width*1e3)
	}
}

func TestGatewayOverheadLimits(t *testing.T) {
	ov := overheadOf(interleaved(12, 50, 2*time.Millisecond, noDrift, 4), nil, "")
	if ov.Added[0].HasInterval || ov.Added[0].Significance != NotSignificant || !warned(ov.Warnings, "an interval needs 5 batches") {
		t.Errorf("12 intervals: %+v, warnings %q", ov.Added[0], ov.Warnings)
	}
	ov = overheadOf(interleaved(30, 2, 2*time.Millisecond, noDrift, 5), nil, "")
	if !ov.Added[0].HasInterval || ov.Added[2].HasInterval || !warned(ov.Warnings, "p99 needs at least 100 on each side") {
		t.Errorf("60 latencies a side: p50 %+v, p99 %+v, warnings %q", ov.Added[0], ov.Added[2], ov.Warnings)
	}
	ivs := interleaved(30, 20, 0, noDrift, 6)
	for _, iv := range ivs {
		delete(iv.Ops, "gateway: x")
	}
	ov = overheadOf(ivs, nil, "")
	if !warned(ov.Warnings, "0 through the gateway") || ov.Added[0].HasInterval {
		t.Errorf("one side: warnings %q", ov.Warnings)
	}
}

func TestGatewayOverheadResources(t *testing.T) {
	res := &Resources{Components: []ComponentResources{
		{Component: Component{Name: "upstream"}, CPUMetric: "cpu", CPU: Stat{N: 30, P99: 0.5}},
		{Component: Component{Name: "gw"}, CPUMetric: "cpu_cores", CPU: Stat{N: 30, P99: 0.25, Max: 0.3, Avg: 0.1},
			MemoryMetric: "rss_bytes", Memory: Stat{N: 30, Max: 40 << 20}},
	}}
	ov := overheadOf(interleaved(30, 50, 0, noDrift, 7), res, "gw")
	if !ov.HasResources || ov.CPU.P99 != 0.25 || ov.Memory.Max != 40<<20 || ov.MemoryMetric != "rss_bytes" || len(ov.Warnings) != 0 {
		t.Errorf("resources %+v; warnings %q", ov, ov.Warnings)
	}
	// 50 requests a second through the gateway at 0.1 cores on average: 2 cores per 1,000/s.
	if ov.CPUPerKRPS < 2-1e-9 || ov.CPUPerKRPS > 2+1e-9 {
		t.Errorf("CPU per 1,000 requests/s %v, want 2", ov.CPUPerKRPS)
	}
	ov = overheadOf(interleaved(30, 50, 0, noDrift, 7), res, "nginx")
	if ov.HasResources || !warned(ov.Warnings, "component nginx has no CPU or memory samples") {
		t.Errorf("unknown component: warnings %q", ov.Warnings)
	}
}

// Two workloads through one gateway at 50/s each: its 0.1 cores are spent
// on 100 requests a second, 1 core per 1,000/s, not 2 for each.
func TestShareGatewayCPU(t *testing.T) {
	res := &Resources{Components: []ComponentResources{
		{Component: Component{Name: "gw"}, CPUMetric: "cpu_cores", CPU: Stat{N: 30, Avg: 0.1}},
	}}
	a, b := overheadOf(interleaved(30, 50, 0, noDrift, 7), res, "gw"), overheadOf(interleaved(30, 50, 0, noDrift, 8), res, "gw")
	alone := overheadOf(interleaved(30, 50, 0, noDrift, 9), res, "gw")
	ShareGatewayCPU([]*Overhead{a, b})
	ShareGatewayCPU([]*Overhead{alone})
	for _, ov := range []*Overhead{a, b} {
		if ov.CPUPerKRPS < 1-1e-9 || ov.CPUPerKRPS > 1+1e-9 || !warned(ov.Warnings, "gw carried 2 measured operations at once (100.0 requests/s through it in all)") {
			t.Errorf("shared: CPU per 1,000 requests/s %v, want 1; warnings %q", ov.CPUPerKRPS, ov.Warnings)
		}
	}
	if alone.CPUPerKRPS < 2-1e-9 || alone.CPUPerKRPS > 2+1e-9 || warned(alone.Warnings, "carried") {
		t.Errorf("alone: CPU per 1,000 requests/s %v, want 2; warnings %q", alone.CPUPerKRPS, alone.Warnings)
	}
}

func warned(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// Near 100 ms the histograms record latencies to 64 µs: an overhead of
// 0.1 ms is a step or two of that, and the figures say so.
func TestGatewayOverheadResolution(t *testing.T) {
	slow := func(int) time.Duration { return 95 * time.Millisecond }
	ov := overheadOf(interleaved(30, 200, 100*time.Microsecond, slow, 8), nil, "")
	if a := ov.Added[0]; a.Resolution != 64*time.Microsecond || !warned(ov.Warnings, "are recorded to 64µs") {
		t.Errorf("p50 %+v; warnings %q", a, ov.Warnings)
	}
	ov = overheadOf(interleaved(30, 200, 2*time.Millisecond, noDrift, 1), nil, "")
	if a := ov.Added[0]; a.Resolution != 4*time.Microsecond || warned(ov.Warnings, "are recorded to") {
		t.Errorf("p50 %+v; warnings %q", a, ov.Warnings)
	}
}

// failSide makes every request of op in ivs fail with HTTP 500 after lat:
// a side with no successful request, as a gateway whose streaming path
// answered 500 to everything.
func failSide(ivs []*stats.Interval, op string, lat time.Duration) {
	for _, iv := range ivs {
		n := iv.Ops[op].Classes.Total()
		st := stats.NewOpStats()
		st.Failed = stats.NewHist()
		for range n {
			st.Failed.Record(lat)
		}
		st.Classes[stats.Status5xx] = n
		st.Samples[stats.Status5xx] = "HTTP 500 Internal Server Error"
		iv.Ops[op] = st
	}
}

// A side with no successful request gives no overhead figure, at any
// quantile, with a warning that says why (before: the direct side's p50
// negated, −5 ms, "~ (no interval)"); the other side keeps its figures.
func TestGatewayOverheadWithoutSuccessesHasNoFigure(t *testing.T) {
	for _, tt := range []struct {
		op, want string
		direct   bool
	}{
		{"gateway: x", "none of the 6000 requests through the gateway in the window succeeded (6000 × status_5xx: HTTP 500", false},
		{"direct: x", "none of the 6000 requests straight to the upstream in the window succeeded", true},
	} {
		ivs := interleaved(30, 200, 2*time.Millisecond, noDrift, 9)
		failSide(ivs, tt.op, 450*time.Microsecond)
		ov := overheadOf(ivs, nil, "")
		for _, a := range ov.Added {
			if a.HasValue() || a.Value != 0 || a.HasInterval || a.Significance == Significant || a.NoDirect != tt.direct || a.NoGateway == tt.direct {
				t.Errorf("%s failed: p%s %+v, want no figure", tt.op, quantileName(a.Quantile), a)
			}
		}
		if !warned(ov.Warnings, tt.want) || !warned(ov.Warnings, "there is no overhead figure") {
			t.Errorf("%s failed: warnings %q, want %q", tt.op, ov.Warnings, tt.want)
		}
	}
	// Both sides succeeding, the figure stays.
	ov := overheadOf(interleaved(30, 200, 2*time.Millisecond, noDrift, 9), nil, "")
	if a := ov.Added[0]; !a.HasValue() || a.Value < 1900*time.Microsecond {
		t.Errorf("both sides: p50 %+v, want about +2 ms", a)
	}
}

// An HTTP answer's size is its body: the gateway's headers differ from the
// upstream's, so the whole answer would show a difference in size where the
// two sides returned the same body.
func TestGatewayOverheadComparesBodies(t *testing.T) {
	ivs := interleaved(10, 100, time.Millisecond, noDrift, 2)
	for _, iv := range ivs {
		for op, st := range iv.Ops {
			st.Counters[stats.BodyBytes] = 1024 * 100
			if op == "gateway: x" {
				st.BytesRecv += 40 * 100 // a Via header and a longer Server
			}
		}
	}
	ov := overheadOf(ivs, nil, "")
	if d, g := ov.Direct, ov.Gateway; d.ResponseBytes != 1024 || g.ResponseBytes != 1024 {
		t.Errorf("response bytes %v direct, %v through, want the bodies' 1024 both", d.ResponseBytes, g.ResponseBytes)
	}
}

// A gateway that holds the first chunk of a stream adds to the time to
// first token far more than to the whole request: the overhead gives
// both, each with its interval, and none of TTFT without streams.
func TestGatewayOverheadOfTheTimeToFirstToken(t *testing.T) {
	ivs := interleaved(30, 200, time.Millisecond, noDrift, 3)
	rng := rand.New(rand.NewPCG(5, 9))
	for _, iv := range ivs {
		for op, st := range iv.Ops {
			for range 200 {
				d := 100*time.Millisecond + time.Duration(rng.NormFloat64()*1e6)
				if strings.HasPrefix(op, "gateway") {
					d += 28 * time.Millisecond
				}
				st.Measures[stats.TTFT] = cmpOr(st.Measures[stats.TTFT], stats.NewHist())
				st.Measures[stats.TTFT].Record(d)
			}
		}
	}
	ov := overheadOf(ivs, nil, "")
	if len(ov.TTFT) != 3 || ov.TTFTCounts != [2]int64{6000, 6000} {
		t.Fatalf("TTFT overhead %+v of %v", ov.TTFT, ov.TTFTCounts)
	}
	for _, a := range ov.TTFT {
		if !a.HasInterval || a.Significance != Significant || a.Value < 27*time.Millisecond || a.Value > 29*time.Millisecond || a.Low > a.Value || a.High < a.Value {
			t.Errorf("TTFT p%s: %v in [%v, %v], want about 28ms, significant", quantileName(a.Quantile), a.Value, a.Low, a.High)
		}
	}
	if a := ov.Added[0]; a.Value > 2*time.Millisecond {
		t.Errorf("latency p50 overhead %v, want about 1ms", a.Value)
	}
	if plain := overheadOf(interleaved(30, 200, time.Millisecond, noDrift, 3), nil, ""); plain.TTFT != nil {
		t.Errorf("TTFT overhead %+v without streams", plain.TTFT)
	}
}

func cmpOr(h, def *stats.Hist) *stats.Hist {
	if h != nil {
		return h
	}
	return def
}
