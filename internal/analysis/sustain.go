package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/units"
)

// The one rule by which perflab says the system did not hold a profile's
// load: the profile is *unsustained*, and a size from it is the size of a
// system past its capacity, not of one serving that load. Any of these
// makes it so:
//
//   - a shortfall: an open-model workload achieved less than its target
//     rate by more than ShortfallLimit;
//   - drops: DropLimit or more of a workload's arrivals in the window found
//     every VU busy at vus.max (and the backlog, if any, full): the target
//     was too slow to keep up;
//   - failures: more than ErrorLimit of a workload's requests in the
//     window failed (or the bound the plan's error_rate gate sets, when it
//     has one): a size is of a system serving its load, not failing it;
//   - a knee: a workload's latency broke away from that of the last
//     profile before it, at a lower load, that the system held on a
//     machine it did not fill, with the same driver parameters (a 1 MiB
//     GET is not judged against a 1 KiB one): its p99 over KneeFactor
//     times that one's and by KneeMinRise at least (FindKnee's rule; both
//     p99s rest on at least MinCountFor(0.99) latencies), and its median
//     service time over KneeFactor times that one's too, by a difference
//     the samples support: the 95 % interval of the ratio (a block
//     bootstrap over the window's intervals, as compare's) above 1. A
//     queue lifts the whole distribution (in an M/M/1 queue every
//     quantile grows as 1 / (1 − utilisation)) and is in the service time,
//     from the request's actual start; a stall of a busy machine lifts the
//     tail alone, and a late dispatch lifts the latency from the intended
//     start, not the service time: neither is a knee. A workload without
//     per-interval service times (a run stored before they were kept) is
//     judged on its latency p50.
//
// A client-bound profile (clientbound.go) is not judged by these: its
// shortfall, drops and latency may be the generator's, not the system's
// (arrivals the generator did not issue make a workload client-bound, not
// unsustained). The two verdicts are kept apart and both are named.
// Unsustained and machine-bound profiles (machinebound.go) are marked
// wherever their sizes appear and left out of the scaling fits.

// ShortfallLimit is how far an open-model workload's achieved rate may
// fall below its target rate, as a share of the target, for its profile
// to count as sustained.
const ShortfallLimit = 0.05

// ErrorLimit is the share of a workload's requests in the window that may
// fail for its profile to count as sustained, when the plan's gates set
// no error_rate bound.
const ErrorLimit = 0.01

// DropLimit is the share of a workload's arrivals in the window dropped
// for want of a VU at or above which its profile is unsustained.
const DropLimit = 0.01

// Held says whether the system held a profile's load.
type Held struct {
	// Unsustained are the reasons the system did not hold the load asked
	// for, by the rule above; nil when it held it.
	Unsustained []string
	// ClientBound says the generator was the limit: the profile was not
	// judged by the rule above.
	ClientBound bool
	// MachineBound is why the generator and the components perflab
	// started filled the machine (Resources.MachineWhy); "" when they did
	// not.
	MachineBound string
	// MachineBusy is why other work filled the machine beside them
	// (Resources.BusyWhy); "" when it did not.
	MachineBusy string
}

// Sustained reports whether the system held the load.
func (h Held) Sustained() bool { return len(h.Unsustained) == 0 }

// Fits reports whether the profile's figures belong in the scaling fits:
// the system held its load, and the machine was not the limit.
func (h Held) Fits() bool { return h.Sustained() && h.MachineBound == "" && h.MachineBusy == "" }

// Why is the reasons the system did not hold the load, "; "-separated.
func (h Held) Why() string { return strings.Join(h.Unsustained, "; ") }

// Marks are the verdicts a table of sizes names beside the profile:
// "unsustained", "machine-bound", "machine-busy", "client-bound"; none
// when it held its load on a machine it did not fill.
func (h Held) Marks() []string {
	var out []string
	if !h.Sustained() {
		out = append(out, "unsustained")
	}
	if h.MachineBound != "" {
		out = append(out, "machine-bound")
	}
	if h.MachineBusy != "" {
		out = append(out, "machine-busy")
	}
	if h.ClientBound {
		out = append(out, "client-bound")
	}
	return out
}

// LeftOutText says why a profile is left out of the scaling fits, or ""
// when it is not; the reasons are the size's (Why, MachineBound).
func (h Held) LeftOutText(profile string) string {
	var parts []string
	if !h.Sustained() {
		parts = append(parts, "the system did not hold its load (unsustained): its capacity was reached below that load")
	}
	if h.MachineBound != "" {
		parts = append(parts, "it was machine-bound: the machine, not the system, set its figures")
	}
	if h.MachineBusy != "" {
		parts = append(parts, "it was machine-busy: other work on the machine took CPU the system might have had")
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("profile %s is left out of the scaling fits: %s", profile, strings.Join(parts, "; "))
}

// FitLoads are the loads (in.Loads) of the sizes the scaling fits are
// over, in order: every known load but those of sizes not Held.Fits.
func (in *Insights) FitLoads() []float64 {
	var out []float64
	for i, l := range in.Loads {
		if l > 0 && (i >= len(in.Sizes) || in.Sizes[i].Held.Fits()) {
			out = append(out, l)
		}
	}
	return out
}

// Unheld is the size of lowest load among those the system did not hold,
// with that load (what it achieved, in the fits' unit): its capacity was
// reached below it. ok is false when the system held every size.
func (in *Insights) Unheld() (size TShirt, load float64, ok bool) {
	for i, t := range in.Sizes {
		if t.Held.Sustained() || i >= len(in.Loads) || in.Loads[i] <= 0 {
			continue
		}
		if !ok || in.Loads[i] < load {
			size, load, ok = t, in.Loads[i], true
		}
	}
	return size, load, ok
}

// JudgeHeld judges each phase, in order, by the rule above: one Held per
// phase. A knee is looked for against the phases before each one.
func JudgeHeld(phases []PhaseData) []Held {
	out := make([]Held, len(phases))
	for i, p := range phases {
		h := &out[i]
		if r := p.Resources; r != nil {
			h.MachineBound, h.MachineBusy = r.MachineWhy, r.BusyWhy
			h.ClientBound = r.ClientBound
		}
		h.ClientBound = h.ClientBound || slices.ContainsFunc(p.Summaries, func(s *Summary) bool { return s.ClientBound })
		for _, s := range p.Summaries { // a failing load is no size, whoever was the limit
			h.Unsustained = append(h.Unsustained, errorsWhy(s, p.ErrorLimit)...)
		}
		if h.ClientBound {
			continue
		}
		for _, s := range p.Summaries {
			h.Unsustained = append(h.Unsustained, shortfallWhy(s)...)
			h.Unsustained = append(h.Unsustained, dropsWhy(s)...)
			h.Unsustained = append(h.Unsustained, kneeWhy(s, p.Resources, phases[:i], out[:i])...)
		}
	}
	return out
}

// shortfallWhy is why an open-model workload's achieved rate fell short
// of its target.
func shortfallWhy(s *Summary) []string {
	target := s.Workload.TargetRate
	// equivalent mutant: target < 0; with target 0 any rate (never negative) is >= 0 × 0.95
	if s.Workload.Model != "open" || target <= 0 || s.Rate >= (1-ShortfallLimit)*target {
		return nil
	}
	return []string{fmt.Sprintf("workload %s achieved %s/s of the %s/s asked (%.1f %% short)",
		s.Workload.DisplayName(), units.Sig3(s.Rate), units.Sig3(target), 100*(1-s.Rate/target))}
}

// dropsWhy is why a workload's dropped arrivals say the target was too
// slow.
func dropsWhy(s *Summary) []string {
	arrivals := s.Requests + s.Dropped
	if s.Dropped <= 0 || float64(s.Dropped) < DropLimit*float64(arrivals) {
		return nil
	}
	return []string{fmt.Sprintf("workload %s dropped %d of %d arrivals (%.1f %%): every VU was busy at vus.max %d, the target too slow to keep up",
		s.Workload.DisplayName(), s.Dropped, arrivals, 100*float64(s.Dropped)/float64(arrivals), s.Workload.VUsMax)}
}

// errorsWhy is why a workload's failures say the system did not serve its
// load; limit is the share allowed, 0 for ErrorLimit.
func errorsWhy(s *Summary, limit float64) []string {
	if limit <= 0 {
		limit = ErrorLimit
	}
	var failed int64
	for _, op := range s.Ops {
		failed += op.Requests - op.OK
	}
	if failed <= 0 || float64(failed) <= limit*float64(s.Requests) {
		return nil
	}
	return []string{fmt.Sprintf("workload %s failed %d of %d requests (%s %%), over the %s %% a held load may fail",
		s.Workload.DisplayName(), failed, s.Requests, units.Sig3(100*float64(failed)/float64(s.Requests)), units.Sig3(100*limit))}
}

// kneeWhy is why a workload's latency broke away from the last earlier
// phase, at a lower load, that held its load and ran the workload (before
// and held are the phases before s's and their verdicts; res is s's
// phase's resources), naming the serving engine's own figures that moved
// with it.
func kneeWhy(s *Summary, res *Resources, before []PhaseData, held []Held) []string {
	name := s.Workload.DisplayName()
	for j := len(before) - 1; j >= 0; j-- {
		b := findSummary(before[j].Summaries, name)
		if b == nil || !held[j].Sustained() || held[j].ClientBound || held[j].MachineBound != "" || held[j].MachineBusy != "" ||
			b.Workload.Params != s.Workload.Params || askedLoad(b) >= askedLoad(s) {
			continue
		}
		steps := []RateLatency{{askedLoad(b), b.Latency.P99, b.Latency.Count}, {askedLoad(s), s.Latency.P99, s.Latency.Count}}
		k, ok := FindKnee(steps)
		if !ok || k.Rate != askedLoad(s) {
			return nil
		}
		median, ok := medianRise(b, s)
		if !ok {
			return nil
		}
		why := fmt.Sprintf("workload %s latency broke away from profile %s's: p99 %v against %v, %s (both over %d×: a knee)",
			name, before[j].Profile, roundSig3(s.Latency.P99), roundSig3(b.Latency.P99), median, KneeFactor)
		if moved := servingMoved(before[j].Resources, res); moved != "" {
			why += "; " + moved
		}
		return []string{why}
	}
	return nil
}

// medianRise says how s's median rose from b's, and whether it rose by
// more than KneeFactor: the service time's when both have per-interval
// service times, whose 95 % interval must then lie above 1 (a point
// estimate where too few intervals give none); else the latency's p50, a
// point estimate.
func medianRise(b, s *Summary) (string, bool) {
	if len(b.ServiceByInterval) == 0 || len(s.ServiceByInterval) == 0 {
		return fmt.Sprintf("p50 %v against %v", roundSig3(s.Latency.P50), roundSig3(b.Latency.P50)), s.Latency.P50 > KneeFactor*b.Latency.P50
	}
	c := CompareLatency(LatencySide{Intervals: b.ServiceByInterval}, LatencySide{Intervals: s.ServiceByInterval}, 0.5, DefaultBootstrap())
	r := c.Ratio
	text := fmt.Sprintf("service time p50 %v against %v", roundSig3(c.B), roundSig3(c.A))
	if math.IsNaN(r.Low) { // too few intervals for one
		return text + fmt.Sprintf(" (%d and %d intervals: too few for a 95 %% interval)", r.NA, r.NB), r.Value > KneeFactor
	}
	text += fmt.Sprintf(", ×%s with a 95 %% interval of %s–%s", units.Sig3(r.Value), units.Sig3(r.Low), units.Sig3(r.High))
	return text, r.Significance == Significant && r.Low > 1 && r.Value > KneeFactor
}

// askedLoad is the load a workload was asked to carry: an open model's
// target rate, a closed model's VUs; else its achieved rate.
func askedLoad(s *Summary) float64 {
	switch {
	case s.Workload.Model == "open" && s.Workload.TargetRate > 0:
		return s.Workload.TargetRate
	case s.Workload.Model == "closed" && s.Workload.VUsMax > 0:
		return float64(s.Workload.VUsMax)
	}
	return s.Rate
}

// roundSig3 rounds d to three significant digits, but to a microsecond
// at least and to a second at most: 10.01ms is 10ms, 1.234567s 1.23s,
// 1234.567s 1235s.
func roundSig3(d time.Duration) time.Duration {
	unit := time.Microsecond
	// equivalent mutant: d > lim; d equal to lim is a multiple of both units
	for lim := time.Millisecond; d >= lim && unit < time.Second; lim *= 10 {
		unit *= 10
	}
	return d.Round(unit)
}
