package analysis

import (
	"fmt"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

func overheadWith(ivs []*stats.Interval, o BootstrapOptions) *Overhead {
	w := Workload{Name: "p/chat", Model: "open", Window: Window{Start: ivs[0].Start, End: ivs[len(ivs)-1].End, Rule: "test"}}
	return GatewayOverhead(OverheadInput{Summary: Summarize(w, ivs), Intervals: ivs, Direct: "direct: x", Gateway: "gateway: x"}, o)
}

// directAt and gatewayAt are latencies of d straight to the upstream and g
// through the gateway, in every interval.
func directAt(d, g time.Duration) func(i, k int) time.Duration {
	return func(_, k int) time.Duration { return []time.Duration{d, g}[k] }
}

// 100 resamples are enough for an interval, 99 are not.
func TestGatewayOverheadResamplesEdge(t *testing.T) {
	for _, tt := range []struct {
		resamples int
		interval  bool
	}{{100, true}, {99, false}} {
		ov := overheadWith(interleaved(30, 200, 2*time.Millisecond, noDrift, 1), BootstrapOptions{Resamples: tt.resamples, Seed: 1})
		a := ov.Added[0]
		if a.HasInterval != tt.interval || warned(ov.Warnings, "100 resamples") == tt.interval {
			t.Errorf("%d resamples: p50 %+v, warnings %q; want an interval: %v", tt.resamples, a, ov.Warnings, tt.interval)
		}
		if tt.interval && (a.Significance != Significant || a.Low > 2*time.Millisecond || a.High < 1950*time.Microsecond) {
			t.Errorf("%d resamples: p50 %v in [%v, %v] %v, want about 2ms, significant", tt.resamples, a.Value, a.Low, a.High, a.Significance)
		}
	}
}

// p99 has an interval with 100 latencies on each side, not with 99 on
// either.
func TestGatewayOverheadP99CountEdge(t *testing.T) {
	for _, tt := range []struct {
		direct, gateway int64
		interval        bool
	}{{100, 100, true}, {99, 100, false}, {100, 99, false}} {
		// 25 intervals of 4 requests a side (5 batches); the first interval
		// holds one fewer on a side of 99.
		count := func(i, k int) int {
			if i == 0 && []int64{tt.direct, tt.gateway}[k] == 99 {
				return 3
			}
			return 4
		}
		ov := overheadWith(ovSides(25, count, directAt(5*time.Millisecond, 7*time.Millisecond)), DefaultBootstrap())
		p99 := ov.Added[2]
		want := fmt.Sprintf("%d and %d latencies: p99 needs at least 100 on each side", tt.direct, tt.gateway)
		if p99.HasInterval != tt.interval || warned(ov.Warnings, want) == tt.interval {
			t.Errorf("%d and %d latencies: p99 %+v, warnings %q; want an interval: %v", tt.direct, tt.gateway, p99, ov.Warnings, tt.interval)
		}
		if tt.interval && (p99.Significance != Significant || p99.Low < 1990*time.Microsecond || p99.High > 2010*time.Microsecond) {
			t.Errorf("%d and %d latencies: p99 %v in [%v, %v] %v, want 2ms, significant", tt.direct, tt.gateway, p99.Value, p99.Low, p99.High, p99.Significance)
		}
	}
}

// An interval that reaches 0 from either side is "~": the data cannot tell
// the gateway's latency from the upstream's.
func TestGatewayOverheadIntervalAtZero(t *testing.T) {
	const base = 5 * time.Millisecond
	for _, tt := range []struct {
		name     string
		gateway  time.Duration // the gateway's latency in the first 2 of 5 batches; base after
		low, top bool          // the interval ends at 0 below (low) or above (top)
	}{
		{"the same latencies", base, true, true},
		{"0.1 ms slower in 2 of 5 batches", base + 100*time.Microsecond, true, false},
		{"0.1 ms faster in 2 of 5 batches", base - 100*time.Microsecond, false, true},
	} {
		lat := func(i, k int) time.Duration {
			if k == 1 && i < 10 {
				return tt.gateway
			}
			return base
		}
		ov := overheadWith(ovSides(25, func(int, int) int { return 4 }, lat), DefaultBootstrap())
		a := ov.Added[0]
		if !a.HasInterval || a.Significance != NotSignificant || (a.Low == 0) != tt.low || (a.High == 0) != tt.top || a.Low > 0 || a.High < 0 {
			t.Errorf("%s: p50 %v in [%v, %v] %v, want an interval reaching 0, ~", tt.name, a.Value, a.Low, a.High, a.Significance)
		}
	}
}

// The gateway's CPU or memory alone are its resource figures; a component
// sampled for neither has none.
func TestGatewayOverheadResourcesOfOneKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    ComponentResources
		has  bool
	}{
		{"CPU only", ComponentResources{Component: Component{Name: "gw"}, CPUMetric: "cpu_cores", CPU: Stat{N: 30, P99: 0.25}}, true},
		{"memory only", ComponentResources{Component: Component{Name: "gw"}, MemoryMetric: "rss_bytes", Memory: Stat{N: 30, Max: 40 << 20}}, true},
		{"neither", ComponentResources{Component: Component{Name: "gw"}, Metrics: map[string]Stat{"up": {N: 30, Max: 1}}}, false},
	} {
		res := &Resources{Components: []ComponentResources{tt.c}}
		ov := overheadOf(interleaved(30, 50, 0, noDrift, 7), res, "gw")
		if ov.HasResources != tt.has || ov.CPU.P99 != tt.c.CPU.P99 || ov.Memory.Max != tt.c.Memory.Max ||
			warned(ov.Warnings, "component gw has no CPU or memory samples") == tt.has {
			t.Errorf("%s: resources %v, CPU %+v, memory %+v; warnings %q", tt.name, ov.HasResources, ov.CPU, ov.Memory, ov.Warnings)
		}
	}
}

// A side with 10 % fewer requests than the other is not yet unbalanced; with
// one fewer still, it is, whichever side it is.
func TestGatewayOverheadBalanceEdge(t *testing.T) {
	for _, tt := range []struct {
		direct, gateway int
		unbalanced      bool
	}{{100, 100, false}, {100, 90, false}, {90, 100, false}, {100, 89, true}, {89, 100, true}} {
		// 10 intervals of 10 requests a side, the last ones short of the total.
		count := func(i, k int) int {
			return min(10, max(0, []int{tt.direct, tt.gateway}[k]-10*i))
		}
		ov := overheadWith(ovSides(10, count, directAt(5*time.Millisecond, 7*time.Millisecond)), DefaultBootstrap())
		want := fmt.Sprintf("the sides are unbalanced (%d and %d requests)", tt.direct, tt.gateway)
		if ov.Direct.Requests != int64(tt.direct) || ov.Gateway.Requests != int64(tt.gateway) || warned(ov.Warnings, want) != tt.unbalanced ||
			warned(ov.Warnings, "unbalanced") != tt.unbalanced {
			t.Errorf("%d and %d requests: warnings %q, want unbalanced: %v", tt.direct, tt.gateway, ov.Warnings, tt.unbalanced)
		}
	}
}

// Success rates that differ are said, with both rates; equal ones are not.
func TestGatewayOverheadSuccessRates(t *testing.T) {
	for _, tt := range []struct {
		direct, gateway int // successful requests of 10 a side per interval
		want            string
	}{
		{10, 9, "success rates differ (100.00 % direct, 90.00 % through the gateway)"},
		{9, 10, "success rates differ (90.00 % direct, 100.00 % through the gateway)"},
		{8, 9, "success rates differ (80.00 % direct, 90.00 % through the gateway)"},
		{9, 9, ""},
		{10, 10, ""},
	} {
		ok := func(_, k int) int { return []int{tt.direct, tt.gateway}[k] }
		ivs := ovSides(10, ok, directAt(5*time.Millisecond, 7*time.Millisecond))
		for _, iv := range ivs {
			for k, op := range []string{"direct: x", "gateway: x"} {
				iv.Ops[op].Classes[stats.Status5xx] = int64(10 - ok(0, k))
			}
		}
		ov := overheadWith(ivs, DefaultBootstrap())
		if tt.want == "" && warned(ov.Warnings, "success rates differ") || tt.want != "" && !warned(ov.Warnings, tt.want) {
			t.Errorf("%d and %d of 10 succeeding: warnings %q, want %q", tt.direct, tt.gateway, ov.Warnings, tt.want)
		}
	}
}

// An overhead under 4 of the histograms' steps is said to be only a few
// of them, at the gateway's latency to 10 µs; one of 4 steps is not.
func TestGatewayOverheadResolutionEdge(t *testing.T) {
	for _, tt := range []struct {
		gateway time.Duration
		want    string
	}{
		{5012 * time.Microsecond, "latencies near 5.02ms are recorded to 4µs: the p50 overhead of 12µs is only a few such steps"},
		{5016 * time.Microsecond, ""},
	} {
		ov := overheadWith(ovSides(25, func(int, int) int { return 4 }, directAt(5*time.Millisecond, tt.gateway)), DefaultBootstrap())
		if tt.want == "" && warned(ov.Warnings, "are recorded to") || tt.want != "" && !warned(ov.Warnings, tt.want) {
			t.Errorf("gateway at %v: p50 %+v, warnings %q, want %q", tt.gateway, ov.Added[0], ov.Warnings, tt.want)
		}
	}
}

// A side with no request in the window has no request or response size,
// 0 rather than 0/0.
func TestGatewayOverheadSideWithoutRequests(t *testing.T) {
	ivs := ovSides(25, func(_, k int) int { return []int{4, 0}[k] }, directAt(5*time.Millisecond, 0))
	ov := overheadWith(ivs, DefaultBootstrap())
	if g := ov.Gateway; g.Requests != 0 || g.RequestBytes != 0 || g.ResponseBytes != 0 ||
		!warned(ov.Warnings, "100 requests straight to the upstream and 0 through the gateway") {
		t.Errorf("gateway side %+v; warnings %q", g, ov.Warnings)
	}
}
