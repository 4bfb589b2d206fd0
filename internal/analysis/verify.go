package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
)

// A size is a claim: that the system, given these limits, serves the
// profile's load. perflab size --verify tests it by running the load again
// with every component perflab starts held to the size's limits (a CFS
// quota, a hard memory limit), and judges the run by the rule below. A
// size holds when, inside its limits:
//
//   - the system held the load (JudgeHeld on the confined run alone:
//     achieved rate, drops, failures);
//   - the plan's SLO gates pass; with none, the latency p50 and p99 are
//     not worse than the unconfined run's by more than the tolerance, by a
//     difference the samples support (the 95 % interval of the ratio, a
//     block bootstrap over the windows' seconds as compare's, lies above
//     1 + tolerance; with too few seconds for one, the point estimate)
//     and by VerifyMinRise at least;
//   - no component was killed for want of memory, nor ended, during it;
//   - each component's peak memory stayed below its limit.
//
// A size that broke none of these holds. One that broke only some while no
// limit bound (never throttled, memory far from its limit), or one whose
// load fell short while no limit bound heavily (HeavyThrottled,
// HeavyMemory: a limit too small to carry a load runs out in most periods
// or fills), is not verified: what stalled it was not the size. On a
// machine busy with other work the same holds of any shortfall.
//
// The evidence goes beside the verdict: each component's throttled
// periods and stalled time, its peak memory against its limit, and its
// GC rate against the unconfined run's.

// DefaultVerifyTolerance is how much slower a confined run's latency may
// be than the unconfined one's for its size to hold, when the plan has no
// SLO gates.
const DefaultVerifyTolerance = 0.2

// VerifyMinRise is the least a latency must rise, beside the tolerance,
// to break a size: the knee's floor (KneeMinRise), so that the jitter of a
// sub-millisecond p99 on a shared machine is not read as a size too
// small.
const VerifyMinRise = KneeMinRise

// Confined is one component's run inside a size's limits, as the kernel
// and the samples saw it.
type Confined struct {
	Component   string   `json:"component"`
	CPULimit    Quantity `json:"cpu_limit"`    // zero: its CPU was not confined
	MemoryLimit Quantity `json:"memory_limit"` // zero: its memory was not confined
	// Periods are the CFS periods in which it ran, Throttled those in which
	// its quota ran out, Stalled the time its threads waited for the next.
	Periods    uint64        `json:"periods"`
	Throttled  uint64        `json:"throttled_periods"`
	Stalled    time.Duration `json:"stalled_ns"`
	MemoryPeak int64         `json:"memory_peak_bytes"` // -1 when the kernel does not say
	OOMKills   uint64        `json:"oom_kills"`         // processes the kernel killed for want of memory
	// Ended says how the component ended during the run ("killed by
	// signal SIGKILL", "exited with status 2"); "" when it ran throughout.
	Ended string `json:"ended,omitempty"`
	// GCPerMin and GCPerMinBefore are its garbage collections per minute
	// (P99), confined and not; 0 when it reports none.
	GCPerMin       float64 `json:"gc_per_min,omitempty"`
	GCPerMinBefore float64 `json:"gc_per_min_unconfined,omitempty"`
	// CPUUsed is the CPU it used over the load's phase, on average, in
	// cores; 0 when it was not sampled.
	CPUUsed float64 `json:"cpu_used_cores,omitempty"`
}

// ThrottledShare is the share of its periods in which the quota ran out.
func (c Confined) ThrottledShare() float64 {
	if c.Periods == 0 {
		return 0
	}
	return float64(c.Throttled) / float64(c.Periods)
}

// VerifyInput is what a size's verification is judged on.
type VerifyInput struct {
	Size, Load string
	// BeforeLatency and AfterLatency are the load workload's latency in
	// each interval of its window, unconfined and confined.
	BeforeLatency, AfterLatency []*stats.Hist
	Held                        Held // JudgeHeld of the confined run's phase alone
	// Gates are the plan's SLO gates' verdicts on the confined run:
	// failed ones as their text, and whether there were any.
	HasGates    bool
	FailedGates []string
	Components  []Confined
	Tolerance   float64 // 0 for DefaultVerifyTolerance
	// MachineBusy says why the machine was busy with other work during
	// the baseline or the confined run; "" when it was not.
	MachineBusy string
}

// Verified is the verdict on a size, as perflab keeps it beside the run
// (verify/verified.json) and the reports show it.
type Verified struct {
	Cell  int    `json:"cell"`
	Size  string `json:"size"`
	Load  string `json:"load"`
	Holds bool   `json:"holds"`
	// Inconclusive says the size neither held nor broke: the run fell
	// short while no limit bound, or none heavily (see the rule above).
	Inconclusive bool              `json:"inconclusive,omitempty"`
	Reasons      []string          `json:"reasons,omitempty"` // why it does not hold; none when it does
	Latency      []VerifiedLatency `json:"latency"`           // p50 and p99, confined against unconfined
	Components   []Confined        `json:"components"`
	Tolerance    float64           `json:"tolerance"`
	Run          string            `json:"run"` // the confined run's directory
	// Achieved is the load workload's rate in the confined run, per second;
	// Target the rate it asked for (0: a closed model's, none).
	Achieved float64 `json:"achieved_per_second"`
	Target   float64 `json:"target_per_second,omitempty"`
	// Warnings say what may have set the verdict besides the limits: a
	// machine busy with other work during either run.
	Warnings []string `json:"warnings,omitempty"`
}

// VerifiedLatency is one latency quantile, confined against unconfined:
// their ratio and its 95 % interval (none with too few intervals).
type VerifiedLatency struct {
	Quantile     float64   `json:"quantile"`
	UnconfinedMs float64   `json:"unconfined_ms"`
	ConfinedMs   float64   `json:"confined_ms"`
	Ratio        float64   `json:"ratio"`
	Interval     []float64 `json:"interval,omitempty"` // [low, high]
}

func verifiedLatency(c LatencyComparison) VerifiedLatency {
	v := VerifiedLatency{Quantile: c.Quantile, UnconfinedMs: ms(c.A), ConfinedMs: ms(c.B), Ratio: c.Ratio.Value}
	if math.IsNaN(v.Ratio) {
		v.Ratio = 0
	}
	if !math.IsNaN(c.Ratio.Low) && !math.IsNaN(c.Ratio.High) {
		v.Interval = []float64{c.Ratio.Low, c.Ratio.High}
	}
	return v
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// confined is the confined latency, from the figure the file keeps.
func (l VerifiedLatency) confined() time.Duration { return time.Duration(l.ConfinedMs * 1e6) }

// Text is the quantile in words: "p99 41ms (×1.05 unconfined)".
func (l VerifiedLatency) Text() string {
	return fmt.Sprintf("p%s %v (×%s unconfined)", quantileName(l.Quantile), roundSig3(l.confined()), units.Sig3(l.Ratio))
}

// JudgeVerified judges a size's confined run by the rule above.
func JudgeVerified(in VerifyInput) Verified {
	tol := in.Tolerance
	if tol <= 0 {
		tol = DefaultVerifyTolerance
	}
	v := Verified{Size: in.Size, Load: in.Load, Components: in.Components, Tolerance: tol}
	if !in.Held.Sustained() {
		v.Reasons = append(v.Reasons, "the load was not held inside the limits: "+in.Held.Why())
	}
	v.Reasons = append(v.Reasons, in.FailedGates...)
	for _, q := range []float64{0.5, 0.99} {
		c := CompareLatency(LatencySide{Intervals: in.BeforeLatency}, LatencySide{Intervals: in.AfterLatency}, q, DefaultBootstrap())
		v.Latency = append(v.Latency, verifiedLatency(c))
		if !in.HasGates {
			v.Reasons = append(v.Reasons, slowerWhy(c, tol, in.AfterLatency)...)
		}
	}
	var broke bool
	for _, c := range in.Components {
		why := c.reasons()
		v.Reasons, broke = append(v.Reasons, why...), broke || len(why) > 0
	}
	v.Holds = len(v.Reasons) == 0
	switch {
	case v.Holds || broke:
	case !in.limitsBound():
		v.Inconclusive = true
		v.Reasons = append(v.Reasons, fmt.Sprintf("the limits never bound (no component throttled in %s %% of its periods or above %s %% of its memory limit): "+
			"what fell short is not the size's, but the machine's or the system's; run again where the machine is not busy",
			units.Sig3(100*BoundThrottled), units.Sig3(100*BoundMemory)))
	case !in.Held.Sustained() && !in.heavilyBound():
		// a limit too small to carry the load runs out in most periods
		// (or fills its memory); a load that fell short while the limits
		// bit now and then was stalled by something else
		v.Inconclusive = true
		why := "the load fell short"
		if in.MachineBusy != "" {
			why += " while the machine was busy with other work (" + in.MachineBusy + ")"
		}
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s, but no component was throttled in %s %% of its periods or reached %s %% of its memory limit, "+
			"as a limit too small to carry the load is: what fell short is not the size's; run again where the machine is not busy",
			why, units.Sig3(100*HeavyThrottled), units.Sig3(100*HeavyMemory)))
	case in.MachineBusy != "" && !in.heavilyBound():
		v.Inconclusive = true
		v.Reasons = append(v.Reasons, fmt.Sprintf("the machine was busy with other work (%s) and no component was throttled in %s %% of its periods "+
			"or reached %s %% of its memory limit: what fell short may be the machine's; run again where the machine is not busy",
			in.MachineBusy, units.Sig3(100*HeavyThrottled), units.Sig3(100*HeavyMemory)))
	}
	return v
}

// HeavyThrottled is the share of periods throttled at which a size's CPU
// limit, not a busy machine, is taken to have held a component back.
const HeavyThrottled = 0.5

// HeavyMemory is the share of its memory limit at which a component's
// peak is taken to have held it back (reclaim, a collector running to
// stay under it), not a busy machine.
const HeavyMemory = 0.98

// heavilyBound reports whether a limit, not a busy machine, held a
// component back: its quota ran out in most periods, or its memory
// reached its limit.
func (in VerifyInput) heavilyBound() bool {
	for _, c := range in.Components {
		if c.ThrottledShare() >= HeavyThrottled || !c.MemoryLimit.IsZero() && float64(c.MemoryPeak) >= HeavyMemory*c.MemoryLimit.Value() {
			return true
		}
	}
	return false
}

// BoundThrottled and BoundMemory say when a size's limits bound a
// component: its quota ran out in that share of its periods, or its peak
// reached that share of its memory limit. A confined run that fell short
// while no limit bound says nothing of the size.
const (
	BoundThrottled = 0.01
	BoundMemory    = 0.9
)

// limitsBound reports whether any component's limits bound it.
func (in VerifyInput) limitsBound() bool {
	for _, c := range in.Components {
		if c.ThrottledShare() >= BoundThrottled || !c.MemoryLimit.IsZero() && float64(c.MemoryPeak) >= BoundMemory*c.MemoryLimit.Value() {
			return true
		}
	}
	return false
}

// slowerWhy is why a latency comparison breaks a size: slower than
// unconfined beyond tol, by a 95 % interval that lies above 1 + tol; with
// too few intervals for one, by the point estimate, said so, when most of
// the confined run's intervals (after) were that slow too: one stall of
// the machine in one second moves a p99 of a few seconds' requests as
// far as a limit that is too small, which slows every second.
func slowerWhy(c LatencyComparison, tol float64, after []*stats.Hist) []string {
	r := c.Ratio
	if c.B-c.A < VerifyMinRise {
		return nil // sub-millisecond jitter of a fast target is no verdict
	}
	head := fmt.Sprintf("latency p%s %v against %v unconfined: ×%s", quantileName(c.Quantile), roundSig3(c.B), roundSig3(c.A), units.Sig3(r.Value))
	switch {
	case r.Significance == Significant && r.Low > 1+tol:
		return []string{fmt.Sprintf("%s (95 %% interval %s–%s), beyond the %s %% tolerance", head, units.Sig3(r.Low), units.Sig3(r.High), units.Sig3(100*tol))}
	case math.IsNaN(r.Low) && r.Value > 1+tol:
		slow, of := intervalsAbove(after, c.Quantile, time.Duration(float64(c.A)*(1+tol)))
		if 2*slow <= of {
			return nil // a moment's stall, not the size
		}
		return []string{fmt.Sprintf("%s, beyond the %s %% tolerance in %d of %d intervals (%d and %d intervals: too few for a 95 %% interval, the point estimate)",
			head, units.Sig3(100*tol), slow, of, r.NA, r.NB)}
	}
	return nil
}

// intervalsAbove counts the intervals with latencies whose q-quantile is
// above bound, and those with latencies.
func intervalsAbove(ivs []*stats.Hist, q float64, bound time.Duration) (above, of int) {
	for _, h := range ivs {
		if h == nil || h.Count() == 0 {
			continue
		}
		of++
		if h.Quantile(q) > bound {
			above++
		}
	}
	return above, of
}

// reasons are why c's figures break its size.
func (c Confined) reasons() []string {
	var out []string
	if c.OOMKills > 0 {
		out = append(out, fmt.Sprintf("component %s was OOM-killed (%d kills) under its %s memory limit", c.Component, c.OOMKills, c.MemoryLimit))
	}
	if c.Ended != "" && c.OOMKills == 0 {
		out = append(out, fmt.Sprintf("component %s ended during the run: %s", c.Component, c.Ended))
	}
	if lim := c.MemoryLimit.Value(); !c.MemoryLimit.IsZero() && c.OOMKills == 0 && float64(c.MemoryPeak) >= lim {
		out = append(out, fmt.Sprintf("component %s reached its memory limit: peak %s of %s", c.Component, mib(c.MemoryPeak), c.MemoryLimit))
	}
	return out
}

// Evidence is c's figures in words: "throttled in 3 % of 600 periods
// (0.4s stalled), peak 180Mi of 256Mi, GC 12/min (8/min unconfined)".
func (c Confined) Evidence() string {
	var parts []string
	if !c.CPULimit.IsZero() {
		parts = append(parts, fmt.Sprintf("throttled in %s %% of %d periods (%v stalled) under %s CPU",
			units.Sig3(100*c.ThrottledShare()), c.Periods, c.Stalled.Round(time.Millisecond), c.CPULimit))
	}
	if !c.MemoryLimit.IsZero() {
		if c.MemoryPeak >= 0 {
			parts = append(parts, fmt.Sprintf("peak %s of %s", mib(c.MemoryPeak), c.MemoryLimit))
		} else {
			parts = append(parts, fmt.Sprintf("memory limit %s (the kernel gives no peak)", c.MemoryLimit))
		}
	}
	if c.GCPerMin > 0 {
		gc := fmt.Sprintf("GC %s/min", units.Sig3(c.GCPerMin))
		if c.GCPerMinBefore > 0 {
			gc += fmt.Sprintf(" (%s/min unconfined)", units.Sig3(c.GCPerMinBefore))
		}
		parts = append(parts, gc)
	}
	return strings.Join(parts, ", ")
}

// mib is bytes in whole Mi, rounded up: a peak reads in the unit of its
// limit.
func mib(b int64) string { return fmt.Sprintf("%dMi", int64(math.Ceil(float64(b)/(1<<20)))) }

// Annotation is the verdict in one line, for a sizes YAML file's
// annotation: "holds at 500/s: p99 41ms (×1.05 unconfined); api throttled
// in 3 % of periods, peak 180Mi of 256Mi".
func (v Verified) Annotation() string {
	verdict := v.Verdict()
	var parts []string
	if len(v.Latency) == 2 {
		parts = append(parts, v.Latency[1].Text())
	}
	for _, c := range v.Components {
		if e := c.Evidence(); e != "" {
			parts = append(parts, c.Component+" "+e)
		}
	}
	text := fmt.Sprintf("%s at %s", verdict, v.Load)
	if !v.Holds {
		text += ": " + strings.Join(v.Reasons, "; ")
		return text
	}
	return text + ": " + strings.Join(parts, "; ")
}

func verdictWords(holds, inconclusive bool) string {
	switch {
	case inconclusive:
		return "not verified"
	case !holds:
		return "does not hold"
	}
	return "holds"
}

// Verdict is the size's verdict in words: "holds", "does not hold" or
// "not verified".
func (v Verified) Verdict() string { return verdictWords(v.Holds, v.Inconclusive) }
