package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The one rule by which perflab says a workload was client-bound (the
// generator, not the target, was the limit). It takes evidence that the
// generator ran out of something:
//
//   - its CPU: the generator's CPU P99 over the phase's window reached
//     GeneratorCPULimit of the cores it could use (Resources.judge); or
//   - its schedule: the open model's dispatcher left UnissuedLimit or more
//     of the arrivals due unissued when the schedule ended (Summary.judge).
//
// Scheduler lag (dispatch − intended start) is recorded and shown, and is
// named beside a verdict as a supporting figure, but is never a reason on
// its own: on a busy machine the operating system delays the dispatcher
// however little it does, and latency, measured from each intended start,
// already includes the delay. Arrivals dropped because every VU was busy
// at vus.max are a pool limit the target's slowness caused, not a
// client-bound verdict. The run report, the SLO notes and the capacity
// search all read this verdict (GeneratorLimited).

// UnissuedLimit is the share of the arrivals due at or above which those
// the dispatcher did not issue make a workload client-bound.
const UnissuedLimit = 0.01

// MinIssued is the share of the arrivals due below which a workload's
// generator, not its target, is what the run measured: it issued fewer
// than half of them.
const MinIssued = 0.5

// Shortfall is why a workload's run measured the generator rather than
// the target, its open-model dispatcher having issued under MinIssued of
// the arrivals due; "" when it issued enough.
func Shortfall(w Workload) string {
	due := w.Scheduled + w.Unissued
	if w.Model != "open" || due == 0 || float64(w.Scheduled) >= MinIssued*float64(due) {
		return ""
	}
	return fmt.Sprintf("the generator issued %d of the %d arrivals due of workload %s (%.1f %%)",
		w.Scheduled, due, w.Name, 100*float64(w.Scheduled)/float64(due))
}

// lagLimit is the scheduler lag p99 above which a report points out that
// arrivals went out late.
const lagLimit = 5 * time.Millisecond

// unissuedWhy is the reason an open-model workload was client-bound by its
// schedule, or "".
func unissuedWhy(w Workload) string {
	due := w.Scheduled + w.Unissued
	if w.Model != "open" || w.Unissued == 0 || float64(w.Unissued) < UnissuedLimit*float64(due) {
		return ""
	}
	return fmt.Sprintf("the generator issued %d of the %d arrivals due (%d not issued, %.1f %%)",
		w.Scheduled, due, w.Unissued, 100*float64(w.Unissued)/float64(due))
}

// cpuWhy is the reason a phase was client-bound by the generator's CPU,
// or "".
func cpuWhy(r *Resources) string {
	if r == nil || !r.ClientBound {
		return ""
	}
	return CPUBound(r.GeneratorCPU, r.CoresAvailable, "P99")
}

// markClientBound records a reason the workload was client-bound, with its
// scheduler lag as a supporting figure, in ClientWhy and in the one
// warning that says so.
func (s *Summary) markClientBound(why string) {
	whys := addWhy(s.ClientWhy, why)
	if whys == s.ClientWhy {
		return
	}
	s.ClientBound, s.ClientWhy = true, whys
	text := "client-bound: " + s.ClientWhy
	if s.Lag.Count > 0 && s.Lag.P99 > lagLimit { // equivalent mutant: Count >= 0; with no lag its P99 is 0
		text += fmt.Sprintf(" (scheduler lag p99 %v)", s.Lag.P99.Round(time.Microsecond))
	}
	text += "; throughput and latency may show the generator's limit, not the target's"
	found := false
	for i, w := range s.Warnings {
		switch {
		case strings.HasPrefix(w, "client-bound: "):
			s.Warnings[i], found = text, true
		case strings.HasPrefix(w, poolLimitPrefix): // no longer the target's alone
			s.Warnings[i] = s.poolLimitText()
		}
	}
	if !found {
		s.Warnings = append([]string{text}, s.Warnings...)
	}
}

// addWhy is the "; "-separated reasons whys with those of why added that
// it does not have yet, in order.
func addWhy(whys, why string) string {
	have := strings.Split(whys, "; ")
	for _, w := range strings.Split(why, "; ") {
		if !slices.Contains(have, w) {
			have = append(have, w)
		}
	}
	return strings.Join(slices.DeleteFunc(have, func(w string) bool { return w == "" }), "; ")
}

// MarkClientBound carries a client-bound verdict of the phase's resources
// (the generator's CPU) over to the summaries of the workloads that ran in
// the phase, with the reason, so every report of a workload shows it; and
// a machine-busy one: arrivals dropped at vus.max then say that the
// generator was starved by others' work before they blame the target.
func MarkClientBound(r *Resources, sums []*Summary) {
	for _, s := range sums {
		s.markClientBound(cpuWhy(r))
		if r != nil && r.MachineBusy && s.StarvedWhy == "" {
			s.StarvedWhy = r.BusyWhy
			for i, w := range s.Warnings {
				if strings.HasPrefix(w, poolLimitPrefix) {
					s.Warnings[i] = s.poolLimitText()
				}
			}
		}
	}
}

// MarkWorkersBound marks the workloads of a phase made by the workers of
// a distributed run client-bound when any worker was, naming each such
// worker and why (as "worker 2 (host): generator CPU P99 …"): every
// workload's figures include that worker's share.
func MarkWorkersBound(sums []*Summary, workers []string) {
	if len(workers) == 0 {
		return
	}
	for _, s := range sums {
		s.markClientBound(strings.Join(workers, "; "))
	}
}

// CPUBound is the rule's CPU signal for a generator (a worker of a
// distributed run) that used cpu of the cores it could use: the reason it
// was the limit, or "".
func CPUBound(cpu, cores float64, what string) string {
	if cores <= 0 || cpu < GeneratorCPULimit*cores {
		return ""
	}
	return fmt.Sprintf("generator CPU %s %.3g of %.3g cores (≥ %.0f %%)", what, cpu, cores, 100*GeneratorCPULimit)
}

// GeneratorLimited says whether the generator, not the target, limited a
// workload whose phase had the resources res (nil when not sampled), and
// why: by the one rule above.
func GeneratorLimited(sum *Summary, res *Resources) (bool, string) {
	var why []string
	for _, w := range []string{cpuWhy(res), unissuedWhy(sum.Workload)} {
		if w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return false, ""
	}
	return true, strings.Join(why, "; ")
}
