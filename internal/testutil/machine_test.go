package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParsePressure(t *testing.T) {
	text := "some avg10=8.10 avg60=26.37 avg300=22.30 total=112407060\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"
	if got := parsePressure(text); got != 112407060*time.Microsecond {
		t.Errorf("some total %v, want 112.407060s", got)
	}
	for _, bad := range []string{"", "full avg10=0.00 total=7\n", "some avg10=1.00\n", "some total=x\n"} {
		if got := parsePressure(bad); got != -1 {
			t.Errorf("%q: %v, want -1 (unknown)", bad, got)
		}
	}
}

func TestParseCPUTicks(t *testing.T) {
	text := "cpu  38252 7 10519 61282 415 3 162 38 11 0\ncpu0 17184 0 4704 33322 46 0 53 18 0 0\n"
	if got, want := parseCPUTicks(text), (cpuTicks{busy: 38252 + 7 + 10519 + 3 + 162, steal: 38}); got != want {
		t.Errorf("%+v, want %+v: idle and iowait are not busy, steal is apart", got, want)
	}
	if got := parseCPUTicks("cpu0 1 2 3 4 5 6 7 8\n"); got != (cpuTicks{}) {
		t.Errorf("no all-CPU line: %+v", got)
	}
}

func TestParseProcStat(t *testing.T) {
	// a comm with a space and a closing parenthesis; utime 14, stime 15,
	// cutime 16, cstime 17
	text := "4242 (a b) c) S 17 4242 2574 0 -1 4194304 100 0 0 0 10 20 30 40 20 0 1 0 193813 3133440\n"
	if p, ok := parseProcStat(text); !ok || p != (proc{pid: 4242, ppid: 17, ticks: 100}) {
		t.Errorf("%+v %v, want pid 4242, parent 17, 100 ticks", p, ok)
	}
	if _, ok := parseProcStat("4242 (x) S 17 1 2"); ok {
		t.Error("a short line parsed")
	}
}

func TestDescendants(t *testing.T) {
	ps := []proc{{1, 0, 1}, {10, 1, 2}, {11, 10, 4}, {12, 11, 8}, {13, 1, 16}, {14, 10, 32}}
	var ticks float64
	for _, p := range descendants(10, ps) {
		ticks += p.ticks
	}
	if ticks != 4+8+32 {
		t.Errorf("descendants of 10 hold %v ticks, want 44 (11, its child 12, and 14)", ticks)
	}
}

// A child that is still running counts in the tree's CPU time, and still
// does once it has ended and been waited for.
func TestTreeCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo spent; cat >/dev/null`)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	before := treeCPU()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "spent\n" {
		t.Fatalf("child said %q", line)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	child, _ := parseProcStat(string(b))
	spent := time.Duration(child.ticks / clockTicks * float64(time.Second))
	if spent == 0 {
		t.Fatal("the child spent no CPU time the kernel counted")
	}
	if got := treeCPU() - before; got < spent {
		t.Errorf("tree CPU grew %v while the running child spent %v", got, spent)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := treeCPU() - before; got < spent {
		t.Errorf("tree CPU grew %v once the child ended, which spent %v", got, spent)
	}
}

func TestLagProbeQuantiles(t *testing.T) {
	p := &lagProbe{}
	if got := p.quantile(0.5); got != 0 {
		t.Errorf("no wakes: p50 %v, want 0", got)
	}
	for range 98 {
		p.record(100 * time.Microsecond)
	}
	p.record(3 * time.Millisecond)
	p.record(-time.Microsecond) // a timer may fire a hair early
	// 100 µs is in the bucket [2^(26/4), 2^(27/4)) µs = [90.5, 107.6)
	if p50, p99, max := p.quantile(0.5), p.quantile(0.99), p.quantile(1); p50 != 108*time.Microsecond ||
		p99 != 108*time.Microsecond || max < 3*time.Millisecond || max > 3600*time.Microsecond {
		t.Errorf("p50 %v, p99 %v, max %v; want 108µs, 108µs and 3 ms to within a bucket", p50, p99, max)
	}
}

// quiet and hogged are the figures of TestRunPlanMatrix alone on a quiet
// 2-core machine, and beside four CPU hogs.
var (
	quiet  = Given{Wall: 15 * time.Second, CPUs: 2, Cores: 0.21, Others: 0.05, Waiting: 0.10, LagP50: 91 * time.Microsecond, LagP99: 304 * time.Microsecond}
	hogged = Given{Wall: 15 * time.Second, CPUs: 2, Cores: 0.15, Others: 1.80, Waiting: 1, LagP50: 91 * time.Microsecond, LagP99: 4 * time.Millisecond}
)

func TestShortTellsABusyMachine(t *testing.T) {
	with := func(g Given, f func(*Given)) Given { f(&g); return g }
	for _, tt := range []struct {
		name string
		g    Given
		need Need
		want string // in Short's answer; "" for none
	}{
		{"quiet", quiet, Need{}, ""},
		{"hogs", hogged, Need{}, "other work kept 1.80 of 2 cores busy"},
		{"other work on idle CPUs", with(hogged, func(g *Given) { g.Waiting = 0.1 }), Need{}, ""},
		{"its own processes queue", with(quiet, func(g *Given) { g.Cores, g.Waiting = 1.9, 0.9 }), Need{}, ""},
		{"no pressure file, a late sleeper", with(hogged, func(g *Given) { g.Waiting = -1 }), Need{}, "other work kept"},
		{"no pressure file, a prompt sleeper", with(hogged, func(g *Given) { g.Waiting, g.LagP99 = -1, time.Millisecond }), Need{}, ""},
		{"fewer cores than the figure needs", quiet, Need{Cores: 0.5}, "got 0.21 cores, not the 0.50"},
		{"a greedy hypervisor", with(quiet, func(g *Given) { g.Steal = 0.3 }), Need{}, "the hypervisor took 0.30 cores"},
	} {
		got := tt.g.Short(tt.need)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Saturated counts the test's own processes as Short does not: the held
// verdicts' test, five runs and the parallel tests, all the test's.
func TestSaturatedCountsTheTestsOwnProcesses(t *testing.T) {
	with := func(g Given, f func(*Given)) Given { f(&g); return g }
	own := with(quiet, func(g *Given) { g.Cores, g.Others, g.Waiting = 1.73, 0.08, 0.89 })
	for _, tt := range []struct {
		name string
		g    Given
		want string
	}{
		{"quiet", quiet, ""},
		{"its own processes fill it", own, "kept 1.81 of 2 cores busy"},
		{"hogs", hogged, "kept 1.95 of 2 cores busy"},
		{"busy CPUs nobody waits for", with(own, func(g *Given) { g.Waiting = 0.1 }), ""},
		{"half the machine", with(own, func(g *Given) { g.Cores = 1 }), ""},
		{"no pressure file, a late sleeper", with(own, func(g *Given) { g.Waiting, g.LagP99 = -1, 4*time.Millisecond }), "kept 1.81"},
	} {
		got := tt.g.Saturated()
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if own.Short(Need{}) != "" {
		t.Errorf("Short %q of a machine its own processes fill: want none", own.Short(Need{}))
	}
}

// A figure that missed its bound fails on a machine that gave enough and
// is skipped, with the machine's figures, on one that did not.
func TestJudgeSkipsOnlyOnABusyMachine(t *testing.T) {
	f := &fakeTB{TB: t}
	judge(f, quiet, Need{}, "p50 9 ms, want 2–5 ms")
	if f.skipped != "" || !strings.HasPrefix(f.failed, "p50 9 ms, want 2–5 ms\n(the machine gave enough: over 15.0 s") {
		t.Errorf("quiet: skipped %q, failed %q; want a failure", f.skipped, f.failed)
	}
	f = &fakeTB{TB: t}
	judge(f, hogged, Need{}, "p50 9 ms, want 2–5 ms")
	if f.failed != "" || !strings.HasPrefix(f.skipped, "machine too busy for a timing figure: p50 9 ms, want 2–5 ms\n(other work kept") ||
		!strings.Contains(f.skipped, "a task waited for a CPU 100 % of the time; a sleeper woke 91µs late at p50, 4ms at p99") {
		t.Errorf("hogged: skipped %q, failed %q; want a skip with the figures", f.skipped, f.failed)
	}
}

// Check passes a figure within its bound without a word, on any machine.
func TestCheckPassesAFigureWithinItsBound(t *testing.T) {
	f := &fakeTB{TB: t}
	Measure(f).Check(f, true, Need{Cores: 100}, "never said")
	if f.skipped != "" || f.failed != "" {
		t.Errorf("skipped %q, failed %q", f.skipped, f.failed)
	}
}

// A figure of several spans is judged on the one that fell short: a quiet
// span beside a hogged one skips, two quiet ones fail.
func TestShortOfJudgesTheSpanThatFellShort(t *testing.T) {
	if g := ShortOf(Need{}, quiet, hogged, quiet); g != hogged {
		t.Errorf("quiet, hogged, quiet: %v, want the hogged span", g)
	}
	if g := ShortOf(Need{}, quiet, quiet); g != quiet {
		t.Errorf("two quiet spans: %v", g)
	}
	f := &fakeTB{TB: t}
	ShortOf(Need{}, quiet, hogged).Check(f, false, Need{}, "ratio %v", 0.9)
	if f.failed != "" || !strings.HasPrefix(f.skipped, "machine too busy for a timing figure: ratio 0.9") {
		t.Errorf("a hogged span: skipped %q, failed %q; want a skip", f.skipped, f.failed)
	}
	f = &fakeTB{TB: t}
	ShortOf(Need{}, quiet, quiet).Check(f, false, Need{}, "ratio %v", 0.9)
	if f.skipped != "" || !strings.HasPrefix(f.failed, "ratio 0.9\n(the machine gave enough") {
		t.Errorf("quiet spans: skipped %q, failed %q; want a failure", f.skipped, f.failed)
	}
}
