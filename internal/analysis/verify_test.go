package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// confinedLatency is n one-second histograms of 200 latencies each,
// lognormal around median (σ 0.3), from seed.
func confinedLatency(n int, median time.Duration, seed uint64) []*stats.Hist {
	rng := rand.New(rand.NewPCG(seed, 5))
	out := make([]*stats.Hist, n)
	for i := range out {
		h := stats.NewHist()
		for range 200 {
			h.Record(time.Duration(float64(median) * math.Exp(0.3*rng.NormFloat64())))
		}
		out[i] = h
	}
	return out
}

func verifyInput(after time.Duration, c Confined) VerifyInput {
	return VerifyInput{Size: "medium", Load: "500/s", BeforeLatency: confinedLatency(30, 2*time.Millisecond, 1),
		AfterLatency: confinedLatency(30, after, 2), Components: []Confined{c}}
}

func api() Confined {
	return Confined{Component: "api", CPULimit: Quantity{ResourceCPU, 500}, MemoryLimit: Quantity{ResourceMemory, 256 << 20},
		Periods: 600, Throttled: 18, Stalled: 400 * time.Millisecond, MemoryPeak: 180 << 20, GCPerMin: 12, GCPerMinBefore: 8}
}

// A size whose confined run served the load as fast as the unconfined
// one, inside its memory, holds, and says on what.
func TestVerifiedHolds(t *testing.T) {
	v := JudgeVerified(verifyInput(2*time.Millisecond, api()))
	if !v.Holds || len(v.Reasons) != 0 {
		t.Fatalf("does not hold: %q", v.Reasons)
	}
	want := "holds at 500/s: p99 "
	evidence := "api throttled in 3 % of 600 periods (400ms stalled) under 500m CPU, peak 180Mi of 256Mi, GC 12/min (8/min unconfined)"
	if a := v.Annotation(); !strings.HasPrefix(a, want) || !strings.HasSuffix(a, evidence) {
		t.Errorf("annotation %q, want %q … %q", a, want, evidence)
	}
}

// Each way a size breaks is a reason of its own: latency beyond the
// tolerance (without gates), failed gates, an OOM kill, a peak at the
// limit, a component that ended, a load not held.
func TestVerifiedBreaks(t *testing.T) {
	oom := api()
	oom.OOMKills, oom.Ended, oom.MemoryPeak = 1, "killed by signal SIGKILL", 256<<20
	atLimit := api()
	atLimit.MemoryPeak = 256 << 20
	ended := api()
	ended.Ended = "exited with status 2"
	for _, tt := range []struct {
		name string
		in   VerifyInput
		want string
	}{
		{"twice as slow", verifyInput(4*time.Millisecond, api()), "latency p50 3.99ms against 1.99ms unconfined: ×2.01 (95 % interval 1.99–2.03), beyond the 20 % tolerance"},
		{"OOM", verifyInput(2*time.Millisecond, oom), "component api was OOM-killed (1 kills) under its 256Mi memory limit"},
		{"at the limit", verifyInput(2*time.Millisecond, atLimit), "component api reached its memory limit: peak 256Mi of 256Mi"},
		{"ended", verifyInput(2*time.Millisecond, ended), "component api ended during the run: exited with status 2"},
	} {
		v := JudgeVerified(tt.in)
		if v.Holds || !strings.Contains(strings.Join(v.Reasons, "\n"), tt.want) || !strings.Contains(v.Annotation(), "does not hold at 500/s: ") {
			t.Errorf("%s: holds %v, %q; want %q", tt.name, v.Holds, v.Reasons, tt.want)
		}
	}
	if v := JudgeVerified(verifyInput(4*time.Millisecond, oom)); len(v.Reasons) != 3 {
		t.Errorf("slow and OOM-killed: %q, want the latency's p50 and p99 and the kill", v.Reasons)
	}
	// 10 % slower is within the tolerance.
	if v := JudgeVerified(verifyInput(2200*time.Microsecond, api())); !v.Holds {
		t.Errorf("10 %% slower: %q", v.Reasons)
	}
	// With SLO gates, the gates judge the latency.
	in := verifyInput(4*time.Millisecond, api())
	in.HasGates = true
	if v := JudgeVerified(in); !v.Holds {
		t.Errorf("gates passed, twice as slow: %q", v.Reasons)
	}
	in.FailedGates = []string{"gate p99 < 5ms failed: p99 9.1ms"}
	in.Held = Held{Unsustained: []string{"workload get achieved 400/s of the 500/s asked (20 % short)"}}
	in.Components[0].Throttled = 540 // 90 %: the CPU limit held it back (TestVerifiedShortfallWithLightThrottling)
	v := JudgeVerified(in)
	if v.Holds || len(v.Reasons) != 2 || !strings.HasPrefix(v.Reasons[0], "the load was not held inside the limits: workload get achieved") {
		t.Errorf("gate failed, load not held: %q", v.Reasons)
	}
}

// A confined run too short for a 95 % interval is judged on the point
// estimate, and says so.
func TestVerifiedShortRunOnThePointEstimate(t *testing.T) {
	in := VerifyInput{Size: "medium", Load: "500/s", BeforeLatency: confinedLatency(5, 2*time.Millisecond, 1),
		AfterLatency: confinedLatency(5, 4*time.Millisecond, 2), Components: []Confined{api()}}
	v := JudgeVerified(in)
	if v.Holds || !strings.Contains(strings.Join(v.Reasons, "\n"), "(5 and 5 intervals: too few for a 95 % interval, the point estimate)") {
		t.Errorf("twice as slow over 5 s: %q", v.Reasons)
	}
	in.AfterLatency = confinedLatency(5, 2100*time.Microsecond, 2)
	if v := JudgeVerified(in); !v.Holds {
		t.Errorf("5 %% slower over 5 s: %q", v.Reasons)
	}
	// One stall of the machine in one of the five seconds (a tenth of its
	// requests 450 ms late): the p99 of the run is ×100, but four seconds
	// of five are as fast as unconfined. Not the size's doing (as in a
	// suite where the other tests' runs shared the machine).
	in.AfterLatency = confinedLatency(5, 2*time.Millisecond, 2)
	for range 20 {
		in.AfterLatency[3].Record(450 * time.Millisecond)
	}
	if v := JudgeVerified(in); !v.Holds {
		t.Errorf("one stalled second of five: %q", v.Reasons)
	}
	// The same p99 in every second is the size's.
	for _, h := range in.AfterLatency {
		for range 20 {
			h.Record(450 * time.Millisecond)
		}
	}
	if v := JudgeVerified(in); v.Holds || !strings.Contains(strings.Join(v.Reasons, "\n"), "beyond the 20 % tolerance in 5 of 5 intervals") {
		t.Errorf("every second stalled: %q", v.Reasons)
	}
}

// A rise under a millisecond is the jitter of a fast target, whatever its
// ratio: medians of 1 ms and 1.4 ms (p99s about 2 and 2.8 ms) hold.
func TestVerifiedIgnoresSubMillisecondRises(t *testing.T) {
	in := verifyInput(1400*time.Microsecond, api())
	in.BeforeLatency = confinedLatency(30, time.Millisecond, 1)
	if v := JudgeVerified(in); !v.Holds {
		t.Errorf("1 ms → 1.4 ms: %q", v.Reasons)
	}
}

// A run that fell short while no limit bound (never throttled, far below
// its memory limit) says nothing of the size: not verified, said why.
func TestVerifiedInconclusiveWhereNoLimitBound(t *testing.T) {
	idle := api()
	idle.Throttled = 0
	v := JudgeVerified(verifyInput(4*time.Millisecond, idle))
	if v.Holds || !v.Inconclusive || !strings.Contains(v.Reasons[len(v.Reasons)-1], "the limits never bound") ||
		!strings.HasPrefix(v.Annotation(), "not verified at 500/s") {
		t.Errorf("holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
	idle.MemoryPeak = 240 << 20 // 94 % of its limit: the memory limit bound
	if v := JudgeVerified(verifyInput(4*time.Millisecond, idle)); v.Inconclusive {
		t.Errorf("near its memory limit: %q", v.Reasons)
	}
}

// On a machine busy with other work, a run that fell short with a few
// throttled periods is not verified; one throttled in most periods is the
// size's doing whatever the machine did.
func TestVerifiedOnABusyMachine(t *testing.T) {
	in := verifyInput(4*time.Millisecond, api()) // throttled in 3 % of periods
	in.MachineBusy = "others than perflab and its components used 1.84 of 2 cores"
	if v := JudgeVerified(in); !v.Inconclusive || !strings.Contains(strings.Join(v.Reasons, "\n"), "the machine was busy with other work (others than") {
		t.Errorf("busy, 3 %% throttled: inconclusive %v, %q", v.Inconclusive, v.Reasons)
	}
	in.Components[0].MemoryPeak = int64(0.95 * in.Components[0].MemoryLimit.Value()) // bound, but not to the last page
	if v := JudgeVerified(in); !v.Inconclusive {
		t.Errorf("busy, 3 %% throttled, 95 %% of its memory: %q", v.Reasons)
	}
	in.Components[0].MemoryPeak = int64(0.99 * in.Components[0].MemoryLimit.Value())
	if v := JudgeVerified(in); v.Inconclusive || v.Holds {
		t.Errorf("busy, at its memory limit: holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
	in.Components[0].MemoryPeak = 100 << 20
	in.Components[0].Throttled = 540
	if v := JudgeVerified(in); v.Inconclusive || v.Holds {
		t.Errorf("busy, 90 %% throttled: holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
}

// A load that fell short while the limits bit now and then (15 % of
// periods throttled, well inside its memory) was stalled by something
// else: not verified, on a machine perflab did not see busy too. The same
// shortfall with the quota out in most periods is the size's.
func TestVerifiedShortfallWithLightThrottling(t *testing.T) {
	light := api()
	light.Periods, light.Throttled = 52, 8
	in := verifyInput(2*time.Millisecond, light)
	in.Held = Held{Unsustained: []string{"workload get achieved 49.6/s of the 100/s asked (50.4 % short)"}}
	v := JudgeVerified(in)
	if v.Holds || !v.Inconclusive || !strings.Contains(v.Reasons[len(v.Reasons)-1], "the load fell short, but no component was throttled in 50 % of its periods") {
		t.Errorf("15 %% throttled, half the load: holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
	in.Components[0].Throttled = 40 // 77 %
	if v := JudgeVerified(in); v.Holds || v.Inconclusive {
		t.Errorf("77 %% throttled, half the load: holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
	// light throttling that slowed a load it held is the size's
	in.Components[0].Throttled, in.Held = 8, Held{}
	in.AfterLatency = confinedLatency(30, 4*time.Millisecond, 2)
	if v := JudgeVerified(in); v.Holds || v.Inconclusive {
		t.Errorf("15 %% throttled, held but twice as slow: holds %v, inconclusive %v, %q", v.Holds, v.Inconclusive, v.Reasons)
	}
}
