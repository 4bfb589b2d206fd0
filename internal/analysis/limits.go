package analysis

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/perflab/perflab/internal/units"
)

// A limit search (perflab size --search-limits) runs a size's profile
// with the size's limits of one resource, CPU or memory, scaled by one
// factor, the other resource unconfined: from the size's own limits, down
// by bisection while it holds, or up by doubling until it does. Its steps
// are the limit-response curve of that resource, and the knee is named
// from them:
//
//   - CPU: each step that held its load (achieved within ShortfallLimit
//     of the target rate) measured the CPU the load took per request: the
//     components' CPU used over the achieved rate, a figure of the
//     process, so such a step a busy machine left unverified counts. The
//     knee is where the limit meets the load's need, the target rate
//     times the median of those costs. Below it, the achieved rate can
//     only fall in proportion to the limit; at it, the quota is spent in
//     every period and the latency has no bound. A step that fell short
//     of its load is not in a steady state: its backlog grew, and the
//     requests it completed in the window carry CPU spent before it (6 ms
//     of work read 5.64 ms a request at 15 of 100/s on a machine four CPU
//     hogs kept busy), so it is left out of the fit; with no step that
//     held, the knee is only bracketed.
//   - memory: no model fits a kernel's reclaim and a runtime's collector,
//     so the knee is bracketed: the largest limit that broke (OOM-killed,
//     or the peak at the limit) and the smallest that held, with the
//     least peak of the steps that held.

// LimitPoint is one step of a limit search: the size's limits of the
// curve's resource scaled by Scale, and what the confined run found.
type LimitPoint struct {
	Scale float64 `json:"scale"` // of the size's limits of the resource
	// CPU and Memory are the sum of the components' limits of the
	// resource searched at this step, in cores or bytes (the other is 0).
	CPU    float64 `json:"cpu_cores,omitempty"`
	Memory int64   `json:"memory_bytes,omitempty"`
	Holds  bool    `json:"holds"`
	// Inconclusive: the step could not be verified (a busy machine); the
	// search ends there.
	Inconclusive bool     `json:"inconclusive,omitempty"`
	Achieved     float64  `json:"achieved_per_second"`
	P99Ms        float64  `json:"p99_ms"`
	Throttled    float64  `json:"throttled_share"`      // the most throttled component's share of periods
	CPUUsed      float64  `json:"cpu_used_cores"`       // the components' CPU used, summed (-1: one was not sampled)
	Peak         int64    `json:"memory_peak_bytes"`    // the components' peak memory, summed (-1: the kernel gives none)
	OOMKills     uint64   `json:"oom_kills,omitempty"`  // summed
	GCPerMin     float64  `json:"gc_per_min,omitempty"` // the highest of the components'
	Why          []string `json:"reasons,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// LimitText is a limit of c's resource in its unit: "0.25 cores", "96Mi".
func (c LimitCurve) LimitText(v float64) string {
	if c.Resource == LimitMemory {
		return mib(int64(v))
	}
	return units.Sig3(v) + " cores"
}

// PeakText is a memory peak in Mi, "–" when the kernel gives none.
func (p LimitPoint) PeakText() string {
	if p.Peak < 0 {
		return "–"
	}
	return mib(p.Peak)
}

// CPUUsedText is p's CPU used in cores, "–" when a component's was not
// sampled.
func (p LimitPoint) CPUUsedText() string {
	if p.CPUUsed < 0 {
		return "–"
	}
	return units.Sig3(p.CPUUsed)
}

// LimitCurve is a size's limit search of one resource: its steps in the
// order run, the smallest scale of the size's limits that held (0 when
// none did), and the knee.
type LimitCurve struct {
	Cell     int    `json:"cell"`
	Size     string `json:"size"`
	Load     string `json:"load"`
	Resource string `json:"resource"` // "cpu" or "memory"
	// SizeCPU and SizeMemory are the size's own limits, summed: what
	// the search scales (one of them), and what says the curve is still
	// the size's.
	SizeCPU    float64      `json:"size_cpu_cores"`
	SizeMemory int64        `json:"size_memory_bytes"`
	Target     float64      `json:"target_per_second,omitempty"` // the profile's rate (0: a closed model's)
	Points     []LimitPoint `json:"points"`
	Smallest   float64      `json:"smallest_holding_scale"`
	// Stopped says the search ended at a step it could not verify (a busy
	// machine): Smallest is then of the steps before it, if any held.
	Stopped bool       `json:"stopped_unverified,omitempty"`
	Knee    *LimitKnee `json:"knee,omitempty"`
}

// The resources a limit search scales.
const (
	LimitCPU    = "cpu"
	LimitMemory = "memory"
)

// LimitKnee is where a curve turns, in the resource's unit (cores, bytes).
type LimitKnee struct {
	// Fitted is the CPU knee: the target rate times CPUPerRequest, fitted
	// on Steps steps; 0 for memory, or with no step to fit on.
	Fitted        float64 `json:"fitted,omitempty"`
	CPUPerRequest float64 `json:"cpu_seconds_per_request,omitempty"`
	Steps         int     `json:"steps,omitempty"`
	// Broke and Held bracket it: the largest limit that did not hold and
	// the smallest that did (0: none).
	Broke float64 `json:"largest_broken,omitempty"`
	Held  float64 `json:"smallest_held,omitempty"`
	// LeastPeak is the least peak memory of the steps that held, in bytes.
	LeastPeak int64 `json:"least_peak_bytes,omitempty"`
}

// Limit is p's limit of the resource searched, in cores or bytes.
func (c LimitCurve) Limit(p LimitPoint) float64 {
	if c.Resource == LimitMemory {
		return float64(p.Memory)
	}
	return p.CPU
}

// SizeLimit is the size's own limit of the resource searched.
func (c LimitCurve) SizeLimit() float64 {
	if c.Resource == LimitMemory {
		return float64(c.SizeMemory)
	}
	return c.SizeCPU
}

// Verdict is the point's verdict in words: "holds", "does not hold" or
// "not verified".
func (p LimitPoint) Verdict() string { return verdictWords(p.Holds, p.Inconclusive) }

// ByLimit is the curve's points in the order of their limit.
func (c LimitCurve) ByLimit() []LimitPoint {
	out := slices.Clone(c.Points)
	slices.SortStableFunc(out, func(a, b LimitPoint) int { return cmp.Compare(c.Limit(a), c.Limit(b)) })
	return out
}

// FitKnee names the curve's knee by the rule above; nil with no step
// that says anything of it.
func (c LimitCurve) FitKnee() *LimitKnee {
	k := &LimitKnee{}
	var costs []float64
	for _, p := range c.Points {
		// CPU time is the process's, whatever the machine did, but only a
		// step that held its load was in a steady state
		if p.Achieved >= (1-ShortfallLimit)*c.Target && p.Achieved > 0 && p.CPUUsed > 0 {
			costs = append(costs, p.CPUUsed/p.Achieved)
		}
		if p.Inconclusive {
			continue
		}
		l := c.Limit(p)
		switch {
		case p.Holds && (k.Held == 0 || l < k.Held):
			k.Held = l
		case !p.Holds && l > k.Broke:
			k.Broke = l
		}
		if p.Holds && p.Peak > 0 && (k.LeastPeak == 0 || p.Peak < k.LeastPeak) {
			k.LeastPeak = p.Peak
		}
	}
	if c.Resource == LimitCPU && c.Target > 0 && len(costs) > 0 {
		k.CPUPerRequest, k.Steps = median(costs), len(costs)
		k.Fitted = c.Target * k.CPUPerRequest
	}
	if *k == (LimitKnee{}) {
		return nil
	}
	return k
}

// KneeText is the knee in words: "the knee: 0.21 cores, where the CPU
// limit meets the 2.1ms of CPU each of 100 requests/s took (fitted on 5
// steps); 0.25 cores held, 0.22 did not".
func (c LimitCurve) KneeText() string {
	k := c.Knee
	if k == nil {
		return ""
	}
	var text string
	if k.Fitted > 0 {
		steps := "steps"
		if k.Steps == 1 {
			steps = "step"
		}
		text = fmt.Sprintf("the knee: %s, where the CPU limit meets the load's need, %s of CPU per request at %s/s (fitted on %d %s)",
			c.LimitText(k.Fitted), units.Sig3(k.CPUPerRequest*1000)+"ms", units.Sig3(c.Target), k.Steps, steps)
	}
	var bracket string
	switch {
	case k.Held > 0 && k.Broke > 0:
		bracket = fmt.Sprintf("between %s, which did not hold, and %s, which held", c.LimitText(k.Broke), c.LimitText(k.Held))
	case k.Held > 0:
		bracket = fmt.Sprintf("below %s, the smallest limit run, which held", c.LimitText(k.Held))
	case k.Broke > 0:
		bracket = fmt.Sprintf("above %s, the largest limit run, which did not hold", c.LimitText(k.Broke))
	}
	if text == "" {
		text = "the knee: " + bracket
	} else if bracket != "" {
		text += "; the bisection put it " + bracket
	}
	if c.Resource == LimitMemory && k.LeastPeak > 0 {
		text += fmt.Sprintf("; the least peak of a step that held: %s", mib(k.LeastPeak))
	}
	return text
}
