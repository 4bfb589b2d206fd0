package testutil

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A timing figure (a latency within a millisecond of a set delay, a rate
// sustained, the cores a process was seen to use) says something of the
// code only if the machine gave the code the CPU it asked for. On a
// machine that other work keeps busy (a build beside the tests, the
// suite's own parallel tests) the figure measures the machine instead.
// Measure watches what the machine gives over the span a test measures,
// and Check tells the two apart when a figure misses its bound: a skip
// that says the machine was too busy, with the figures that say so, or a
// failure when the machine gave enough, so that a bug still fails.

// Machine measures, from Measure on, what the machine gives the test.
type Machine struct {
	start time.Time
	tree0 time.Duration // the CPU time of this process's tree
	wait0 time.Duration // the kernel's CPU pressure, "some" total
	stat0 cpuTicks
	probe *lagProbe
}

// Given is what the machine gave over a span.
type Given struct {
	Wall time.Duration
	CPUs int
	// Cores is the CPU time of this process and its descendants over
	// the span (those still running, those that ended: a perflab run
	// with the components it started), divided by the wall time.
	Cores float64
	// Others is the cores the rest of the machine kept busy: every
	// CPU's busy time less Cores.
	Others float64
	// Steal is the cores the hypervisor gave to other machines.
	Steal float64
	// Waiting is the share of the span in which some runnable task had
	// no CPU (the kernel's CPU pressure, "some"); -1 where the kernel
	// does not say (no /proc/pressure/cpu).
	Waiting float64
	// LagP50 and LagP99 are how late a goroutine that sleeps a
	// millisecond at a time woke: what every sleeping server of the test
	// (a target's --latency, a gateway's delay) also waits on.
	LagP50, LagP99 time.Duration
}

// Need is what a timing figure needs of the machine beyond a fair share
// of it (see Given.Short).
type Need struct {
	// Cores this process's tree must have got, for a test whose own
	// CPU makes the figure; 0 asks nothing.
	Cores float64
}

// The machine was busy when other work kept more than a quarter of its
// CPUs busy while tasks waited for a CPU a fifth of the time or more
// (or, where the kernel keeps no CPU pressure, while a sleeper woke
// 2 ms late at p99), or when the hypervisor took a tenth of a core.
// Both halves count: other work on CPUs nobody else wanted took nothing
// from the test, and a test whose own processes queue for the CPUs on a
// machine nothing else uses has only itself to blame. On a quiet 2-core
// machine, as a test of ours runs alone, other work kept 0–0.3 cores
// busy and a task waited for a CPU 4–20 % of the time; beside four CPU
// hogs, 1.5–1.95 cores and 79–100 % of the time.
const (
	busyOthers  = 0.25 // of the CPUs
	busyWaiting = 0.2
	busyLag     = 2 * time.Millisecond
	busySteal   = 0.1 // cores
)

// Measure starts measuring what the machine gives the test; the
// measurement stops when the test ends. The test's processes are this
// process and its descendants: a test that runs in parallel with others
// (t.Parallel) counts theirs as its own, so their load is not other work
// to it. A timing test that other tests' load would move runs alone.
func Measure(t testing.TB) *Machine {
	t.Helper()
	m := &Machine{start: time.Now(), tree0: treeCPU(), wait0: cpuWaiting(), stat0: readCPUTicks(), probe: startLagProbe(time.Millisecond)}
	t.Cleanup(m.probe.stop)
	return m
}

// Given returns what the machine gave from Measure until now.
func (m *Machine) Given() Given {
	wall := time.Since(m.start)
	secs := wall.Seconds()
	g := Given{Wall: wall, CPUs: runtime.NumCPU(), Waiting: -1}
	g.Cores = (treeCPU() - m.tree0).Seconds() / secs
	if w := cpuWaiting(); w >= 0 && m.wait0 >= 0 {
		g.Waiting = min(1, (w-m.wait0).Seconds()/secs)
	}
	d := readCPUTicks().sub(m.stat0)
	g.Others = max(0, d.busy/clockTicks/secs-g.Cores)
	g.Steal = d.steal / clockTicks / secs
	g.LagP50, g.LagP99 = m.probe.quantile(0.5), m.probe.quantile(0.99)
	return g
}

// String is the figures, as a skip or a failure reports them.
func (g Given) String() string {
	waiting := "unknown"
	if g.Waiting >= 0 {
		waiting = fmt.Sprintf("%.0f %%", 100*g.Waiting)
	}
	return fmt.Sprintf("over %.1f s this test's processes got %.2f cores, other work kept %.2f of %d busy, the hypervisor took %.2f; "+
		"a task waited for a CPU %s of the time; a sleeper woke %s late at p50, %s at p99",
		g.Wall.Seconds(), g.Cores, g.Others, g.CPUs, g.Steal, waiting, g.LagP50, g.LagP99)
}

// Short says why g was not enough for a figure that needs need, or ""
// when it was.
func (g Given) Short(need Need) string {
	var why []string
	if g.Cores < need.Cores {
		why = append(why, fmt.Sprintf("this test's processes got %.2f cores, not the %.2f the figure needs", g.Cores, need.Cores))
	}
	if g.Others > busyOthers*float64(g.CPUs) && g.contended() {
		why = append(why, fmt.Sprintf("other work kept %.2f of %d cores busy while tasks waited for one", g.Others, g.CPUs))
	}
	if g.Steal > busySteal {
		why = append(why, fmt.Sprintf("the hypervisor took %.2f cores", g.Steal))
	}
	return strings.Join(why, "; ")
}

// contended says tasks waited for a CPU a fifth of the time or more (or,
// where the kernel keeps no CPU pressure, a sleeper woke 2 ms late at p99).
func (g Given) contended() bool {
	return g.Waiting >= busyWaiting || (g.Waiting < 0 && g.LagP99 >= busyLag)
}

// Saturated says why the machine as a whole was busy, the test's own
// processes too, or "" when it was not: 3/4 of its CPUs or more kept busy
// while tasks waited for one (as Short tells contention). It is for a
// test whose own processes are each other's busy machine (several runs of
// perflab at once, each judging the others' load), which Short, counting
// them all as the test's, cannot see.
func (g Given) Saturated() string {
	if busy := g.Cores + g.Others; busy >= 0.75*float64(g.CPUs) && g.contended() {
		return fmt.Sprintf("the machine's processes, this test's among them, kept %.2f of %d cores busy while tasks waited for one", busy, g.CPUs)
	}
	return ""
}

// Check reports a timing figure that missed its bound (ok false): as a
// skip, "machine too busy for a timing figure", when the machine gave
// less than need over the span so far, else as a failure. Both say what
// the machine gave. A figure within its bound passes on any machine.
func (m *Machine) Check(t testing.TB, ok bool, need Need, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	judge(t, m.Given(), need, fmt.Sprintf(format, args...))
}

// Check is Machine.Check on g, what the machine gave over a span that
// ended before: for a figure made of several spans (two runs compared),
// judged on the span that fell short (ShortOf).
func (g Given) Check(t testing.TB, ok bool, need Need, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	judge(t, g, need, fmt.Sprintf(format, args...))
}

// ShortOf is the first of gs that fell short of need, else the last; the
// zero Given, which is short of nothing, for none.
func ShortOf(need Need, gs ...Given) Given {
	for _, g := range gs {
		if g.Short(need) != "" {
			return g
		}
	}
	if len(gs) == 0 {
		return Given{}
	}
	return gs[len(gs)-1]
}

// judge skips with msg when g falls short of need, else fails with it.
func judge(t testing.TB, g Given, need Need, msg string) {
	t.Helper()
	if why := g.Short(need); why != "" {
		t.Skipf("machine too busy for a timing figure: %s\n(%s: %s)", msg, why, g)
		return
	}
	t.Errorf("%s\n(the machine gave enough: %s)", msg, g)
}

// Log logs what the machine gave so far.
func (m *Machine) Log(t testing.TB) {
	t.Helper()
	t.Logf("the machine: %s", m.Given())
}
