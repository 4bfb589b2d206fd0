package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// OverheadQuantiles are the latency quantiles a gateway's added latency is
// given at.
var OverheadQuantiles = []float64{0.50, 0.90, 0.99}

// OverheadInput is one operation of a workload that ran the same load
// straight to an upstream and through a gateway in front of it, interleaved
// in time (internal/driver/interleave): the two operations' names, the
// workload's figures and the gateway component's resources.
type OverheadInput struct {
	Summary   *Summary          // the workload's summary: its window and per-operation figures
	Intervals []*stats.Interval // the workload's intervals; those inside Summary.Window count
	Direct    string            // the operation straight to the upstream
	Gateway   string            // the same operation through the gateway
	Component string            // the gateway's component in the plan; "" when none was named or found
	Resources *Resources        // the phase's resource figures; nil when nothing was sampled
}

// OverheadSide is one side's figures over the window, in the shape of the
// Bifrost report's headline.
type OverheadSide struct {
	Op            string
	Requests, OK  int64
	SuccessRate   float64 // OK / Requests
	RequestBytes  float64 // mean request body bytes per request
	ResponseBytes float64 // mean response body bytes per request
	Latency       Quantiles
}

// Added is the latency the gateway adds at one quantile: the quantile
// through the gateway minus the quantile straight to the upstream, with a
// 95 % interval.
type Added struct {
	Quantile        float64
	Direct, Gateway time.Duration // the two sides' quantiles, from the merged histograms
	Value           time.Duration // Gateway − Direct
	Low, High       time.Duration // the 95 % interval; meaningful only when HasInterval
	HasInterval     bool
	// Resolution is how finely the histograms record latencies near these
	// quantiles (stats.Resolution): the difference moves in steps of about it.
	Resolution time.Duration
	// Significance is Significant when the interval excludes 0, else
	// NotSignificant ("~": the data cannot tell the gateway's latency from
	// the upstream's, or there was too little of it for an interval).
	Significance Significance
	// NoDirect and NoGateway say that side had no successful request in
	// the window: its quantile is no figure (latencies are of successful
	// requests only), and neither is the difference.
	NoDirect, NoGateway bool
}

// HasValue reports whether both sides had successful requests, so that
// Value is a figure: a side with none has no latency to subtract.
func (a Added) HasValue() bool { return !a.NoDirect && !a.NoGateway }

// Overhead is a gateway's overhead measured by one interleaved workload:
// both sides' success rate, sizes and latency, the latency the gateway
// adds, and the gateway component's CPU and peak memory.
type Overhead struct {
	Workload        Workload
	Window          Window
	Direct, Gateway OverheadSide
	Added           []Added // at OverheadQuantiles
	// TTFT is the time to first token the gateway adds, at
	// OverheadQuantiles, for streams: what a chat user feels, which a
	// gateway that holds the first chunk raises more than the whole
	// request's latency. Nil when either side has no TTFT.
	TTFT []Added
	// TTFTCounts are the two sides' TTFTs in the window.
	TTFTCounts [2]int64
	// CPUPerKRPS is the gateway component's mean CPU in cores per 1,000
	// requests a second through it; 0 without CPU figures or requests.
	CPUPerKRPS   float64
	Component    string // the gateway component; "" when unknown
	HasResources bool   // the component was sampled in the window
	CPU          Stat   // cores, from CPUMetric
	CPUMetric    string
	Memory       Stat // bytes, from MemoryMetric; Memory.Max is the peak
	MemoryMetric string
	Intervals    int // intervals in the window
	Batches      int // batches of consecutive intervals the bootstrap resampled
	Method       string
	Warnings     []string
}

// GatewayOverhead measures a gateway's overhead from one interleaved
// workload. The added latency at each of OverheadQuantiles is the
// difference of the two sides' quantiles over the window, from the merged
// histograms (exact, as in the summary). Its 95 % interval is a paired
// block bootstrap over time: the window's intervals are merged into
// batches of ⌈√n⌉ consecutive intervals, the same batches on both sides;
// each resample draws as many batch indices as there are, with
// replacement, and merges the batches so drawn on each side: the two
// sides of one resample cover the same moments, as they did in the run, so
// the interval reflects the gateway and not the machine's ups and downs.
// It needs MinLatencyBatches batches and MinCountFor(q) latencies on each
// side; otherwise the difference is given without an interval, as "~".
func GatewayOverhead(in OverheadInput, o BootstrapOptions) *Overhead {
	s := in.Summary
	ov := &Overhead{Workload: s.Workload, Window: s.Window, Component: in.Component,
		Method: fmt.Sprintf("paired bootstrap over batches of ⌈√n⌉ consecutive intervals' histograms, the same batches on both sides: %d resamples, seed %d, 95 %% percentile interval", o.Resamples, o.Seed)}
	ov.Direct, ov.Gateway = overheadSide(s, in.Direct), overheadSide(s, in.Gateway)
	ivs := inWindow(in.Intervals, s.Window)
	ov.Intervals = len(ivs)
	da, db := opLatencies(ivs, in.Direct), opLatencies(ivs, in.Gateway)
	ov.Batches = len(batches(da))
	noDirect, noGateway := ov.Direct.OK == 0, ov.Gateway.OK == 0
	ov.Added = added(da, db, noDirect, noGateway)
	ov.addResources(in)
	if ov.Direct.Requests == 0 || ov.Gateway.Requests == 0 {
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("%d requests straight to the upstream and %d through the gateway in the window: no overhead can be measured",
			ov.Direct.Requests, ov.Gateway.Requests))
		return ov
	}
	if noDirect || noGateway {
		ov.warnNoSuccess(s)
		return ov
	}
	ov.Warnings = append(ov.Warnings, ov.intervals(ov.Added, da, db, [2]int64{ov.Direct.Latency.Count, ov.Gateway.Latency.Count}, "latencies", o)...)
	ov.addTTFT(ivs, in, o)
	ov.judge(s.ClientBound)
	return ov
}

// added is the difference of the two sides' merged histograms at each of
// OverheadQuantiles, without intervals yet.
func added(da, db []*stats.Hist, noDirect, noGateway bool) []Added {
	ma, mb := LatencySide{Intervals: da}.merged(), LatencySide{Intervals: db}.merged()
	var out []Added
	for _, q := range OverheadQuantiles {
		a, b := ma.Quantile(q), mb.Quantile(q)
		ad := Added{Quantile: q, Direct: a, Gateway: b, Value: b - a,
			Resolution: max(stats.Resolution(a), stats.Resolution(b)), NoDirect: noDirect, NoGateway: noGateway}
		if !ad.HasValue() {
			ad.Value = 0
		}
		out = append(out, ad)
	}
	return out
}

// addTTFT measures the time to first token the gateway adds, the same
// way as the latency, when both sides streamed.
func (ov *Overhead) addTTFT(ivs []*stats.Interval, in OverheadInput, o BootstrapOptions) {
	ta, tb := opMeasure(ivs, in.Direct, stats.TTFT), opMeasure(ivs, in.Gateway, stats.TTFT)
	ca, cb := LatencySide{Intervals: ta}.merged().Count(), LatencySide{Intervals: tb}.merged().Count()
	if ca == 0 || cb == 0 {
		return
	}
	ov.TTFT, ov.TTFTCounts = added(ta, tb, false, false), [2]int64{ca, cb}
	ov.Warnings = append(ov.Warnings, ov.intervals(ov.TTFT, ta, tb, ov.TTFTCounts, "times to first token", o)...)
}

// warnNoSuccess says which side had no successful request, with what
// its requests failed of: there is then no overhead figure.
func (ov *Overhead) warnNoSuccess(s *Summary) {
	for _, x := range []struct {
		side OverheadSide
		way  string
	}{{ov.Direct, "straight to the upstream"}, {ov.Gateway, "through the gateway"}} {
		if x.side.OK > 0 {
			continue
		}
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("none of the %d requests %s in the window succeeded (%s): latencies are of successful requests only, "+
			"so that side has no latency and there is no overhead figure", x.side.Requests, x.way, opErrors(s, x.side.Op)))
	}
}

// opErrors is what the operation's requests failed of: "120 × 5xx: HTTP
// 500 Internal Server Error".
func opErrors(s *Summary, op string) string {
	var parts []string
	for _, o := range s.Ops {
		if o.Name != op {
			continue
		}
		for _, e := range o.Errors {
			p := fmt.Sprintf("%d × %s", e.Count, e.Class)
			if e.Sample != "" {
				p += ": " + e.Sample
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "no error recorded"
	}
	return strings.Join(parts, "; ")
}

// intervals gives each added figure its interval where the data
// supports one: da and db are the two sides' histograms per interval,
// counts their values in the window, what names them in a warning.
func (ov *Overhead) intervals(adds []Added, da, db []*stats.Hist, counts [2]int64, what string, o BootstrapOptions) []string {
	ba, bb := batches(da), batches(db)
	if len(ba) < MinLatencyBatches || o.Resamples < 100 {
		return []string{fmt.Sprintf("%d intervals in the window (%d batches), %d resamples: an interval needs %d batches and 100 resamples; the added %s are given without one",
			ov.Intervals, len(ba), o.Resamples, MinLatencyBatches, what)}
	}
	var warnings []string
	var qs []float64
	for _, a := range adds {
		if need := MinCountFor(a.Quantile); counts[0] < need || counts[1] < need {
			warnings = append(warnings, fmt.Sprintf("%d and %d %s: p%s needs at least %d on each side for an interval",
				counts[0], counts[1], what, quantileName(a.Quantile), need))
			continue
		}
		qs = append(qs, a.Quantile)
	}
	lows, highs := pairedQuantileDiffs(ba, bb, qs, o)
	for i, q := range qs {
		for j := range adds {
			if a := &adds[j]; a.Quantile == q {
				a.Low, a.High, a.HasInterval = lows[i], highs[i], true
				if a.Low > 0 || a.High < 0 {
					a.Significance = Significant
				}
			}
		}
	}
	return warnings
}

// addResources takes the gateway component's CPU and memory from the
// phase's resources.
func (ov *Overhead) addResources(in OverheadInput) {
	if in.Component == "" {
		ov.Warnings = append(ov.Warnings, "no gateway component named (params gateway.component) or in group gateway: no CPU or memory figures for it")
		return
	}
	if in.Resources != nil {
		for _, c := range in.Resources.Components {
			if c.Name == in.Component && (c.CPUMetric != "" || c.MemoryMetric != "") {
				ov.HasResources = true
				ov.CPU, ov.CPUMetric, ov.Memory, ov.MemoryMetric = c.CPU, c.CPUMetric, c.Memory, c.MemoryMetric
				if rate := ov.GatewayRate(); c.CPUMetric != "" && rate > 0 {
					ov.CPUPerKRPS = c.CPU.Avg / rate * 1000
				}
				return
			}
		}
	}
	ov.Warnings = append(ov.Warnings, fmt.Sprintf("component %s has no CPU or memory samples in the window", in.Component))
}

// judge adds the warnings a reader needs before trusting the difference.
func (ov *Overhead) judge(clientBound bool) {
	d, g := ov.Direct, ov.Gateway
	// equivalent mutant: hi >= 0; judge runs only when both sides had requests, so hi is at least 1
	if lo, hi := min(d.Requests, g.Requests), max(d.Requests, g.Requests); hi > 0 && float64(lo) < 0.9*float64(hi) {
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("the sides are unbalanced (%d and %d requests): were some requests dropped on one side?", d.Requests, g.Requests))
	}
	// equivalent mutant: <= 1 for either < 1; rates are at most 1, and two that differ are not both 1
	if d.SuccessRate != g.SuccessRate && (d.SuccessRate < 1 || g.SuccessRate < 1) {
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("success rates differ (%.2f %% direct, %.2f %% through the gateway): latencies are of successful requests only, so each side's rest on a different share of its requests",
			100*d.SuccessRate, 100*g.SuccessRate))
	}
	if a := ov.Added[0]; a.Value != 0 && a.Value.Abs() < 4*a.Resolution {
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("latencies near %v are recorded to %v: the p%s overhead of %v is only a few such steps",
			a.Gateway.Round(10*time.Microsecond), a.Resolution, quantileName(a.Quantile), a.Value))
	}
	if clientBound {
		ov.Warnings = append(ov.Warnings, "client-bound: the generator's own delay is in both sides' latencies; the difference may still hold, the absolute figures do not")
	}
}

func overheadSide(s *Summary, op string) OverheadSide {
	side := OverheadSide{Op: op}
	for _, o := range s.Ops {
		if o.Name != op {
			continue
		}
		side.Requests, side.OK, side.SuccessRate, side.Latency = o.Requests, o.OK, o.SuccessRate, o.Latency
		if o.Whole != nil && o.Requests > 0 {
			side.RequestBytes = float64(o.Whole.BytesSent) / float64(o.Requests)
			recv := o.Whole.BytesRecv
			if o.HasConnections() { // an HTTP answer: its body, not its headers, which differ by hop
				recv = o.Counters[stats.BodyBytes]
			}
			side.ResponseBytes = float64(recv) / float64(o.Requests)
		}
	}
	return side
}

// ShareGatewayCPU sets the CPU per 1,000 requests/s of overheads measured
// in one phase through one gateway component over the requests of all of
// them: the component's CPU is one figure, spent on every request through
// it, so dividing it by one workload's (or one operation's) rate alone
// would count the others' requests' CPU as that one's. Each says whose
// requests it is over when there are several; one alone is left as it is.
func ShareGatewayCPU(ovs []*Overhead) {
	if len(ovs) < 2 {
		return
	}
	var rate float64
	for _, ov := range ovs {
		rate += ov.GatewayRate()
	}
	for _, ov := range ovs {
		if ov.CPUPerKRPS == 0 || rate <= 0 {
			continue
		}
		ov.CPUPerKRPS = ov.CPU.Avg / rate * 1000
		ov.Warnings = append(ov.Warnings, fmt.Sprintf("%s carried %d measured operations at once (%.1f requests/s through it in all): its CPU per 1,000 requests/s is over all of them",
			ov.Component, len(ovs), rate))
	}
}

// GatewayRate is the requests per second through the gateway over the
// window.
func (ov *Overhead) GatewayRate() float64 {
	if d := ov.Window.End.Sub(ov.Window.Start).Seconds(); d > 0 {
		return float64(ov.Gateway.Requests) / d
	}
	return 0
}

// opMeasure is op's histogram of measure m in each interval, empty where
// it has none.
func opMeasure(ivs []*stats.Interval, op string, m stats.Measure) []*stats.Hist {
	out := make([]*stats.Hist, len(ivs))
	for i, iv := range ivs {
		if st := iv.Ops[op]; st != nil && st.Measures[m] != nil {
			out[i] = st.Measures[m]
		} else {
			out[i] = stats.NewHist()
		}
	}
	return out
}

// opLatencies is op's latency histogram in each interval, empty where it
// has none.
func opLatencies(ivs []*stats.Interval, op string) []*stats.Hist {
	out := make([]*stats.Hist, len(ivs))
	for i, iv := range ivs {
		if st := iv.Ops[op]; st != nil {
			out[i] = st.Latency
		} else {
			out[i] = stats.NewHist()
		}
	}
	return out
}
