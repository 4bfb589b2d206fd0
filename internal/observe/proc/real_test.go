//go:build unix

package proc

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
)

// childEnv makes the test binary act as one of the children below.
const childEnv = "PERFLAB_PROC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "burn":
		burn(3 * time.Second)
	case "alloc":
		alloc(200 << 20)
	case "parent":
		parent()
	case "idle":
		fmt.Println("ready")
	}
	// Every child lives until its stdin is closed (by the test, or with it).
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// burn keeps one core busy for d of wall time, then says how much CPU it got.
func burn(d time.Duration) {
	fmt.Println("started")
	before, start := cpuSeconds(), time.Now()
	for x := 1; time.Since(start) < d; x++ {
		x ^= x << 3
	}
	fmt.Printf("done %.3f\n", (cpuSeconds()-before)/time.Since(start).Seconds())
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// alloc allocates n bytes, touches every page and keeps them.
func alloc(n int) {
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	runtime.KeepAlive(b)
}

// parent starts two idle children sharing its stdin, and reaps them once
// its stdin is closed.
func parent() {
	var children []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"=idle")
		cmd.Stdin = os.Stdin
		if err := cmd.Start(); err != nil {
			fmt.Println("cannot start child:", err)
			os.Exit(1)
		}
		children = append(children, cmd)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range children {
		_ = c.Wait()
	}
}

// child runs cmd in its own process group and returns its pid and its
// stdout lines. At the end of the test its stdin is closed, on which every
// child exits after reaping its own; one that has not exited 10 s later is
// killed with its group.
func child(t *testing.T, cmd *exec.Cmd) (int, <-chan string) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	lines := make(chan string, 16)
	go func() {
		defer close(exited)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			select {
			case lines <- sc.Text():
			default: // nobody listening any more
			}
		}
		close(lines)
		_ = cmd.Wait() // after reading stdout to its end, as exec.Cmd wants
	}()
	return cmd.Process.Pid, lines
}

func testChild(t *testing.T, mode string) (int, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return child(t, cmd)
}

// expect waits for the child's next line, which must start with prefix.
func expect(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, prefix) {
			t.Fatalf("child said %q (open %v), want %q…", line, ok, prefix)
		}
		return line
	case <-time.After(20 * time.Second):
		t.Fatalf("child did not say %q within 20 s", prefix)
	}
	return ""
}

func value(t *testing.T, points []observe.Point, metric string) float64 {
	t.Helper()
	for _, p := range points {
		if p.Metric == metric {
			return p.Value
		}
	}
	t.Fatalf("no %s in %v", metric, points)
	return 0
}

func TestRealChildBurningOneCore(t *testing.T) {
	pid, lines := testChild(t, "burn")
	tree, err := New("", pid)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, lines, "started")
	observetest.Sample(t, tree, time.Now())
	done := expect(t, lines, "done")
	cores := value(t, observetest.Sample(t, tree, time.Now()), observe.CPUCores)
	var own float64 // what the child measured itself, a check on the machine
	_, _ = fmt.Sscanf(done, "done %f", &own)
	t.Logf("tree: %.3f cores; the child's own rusage: %.3f", cores, own)
	if math.Abs(cores-own) > 0.1*own {
		t.Errorf("CPU = %.3f cores, the child's own rusage says %.3f", cores, own)
	}
	if math.Abs(cores-1) > 0.1 {
		if own < 0.9 {
			t.Skipf("the machine is too busy to test 1 core: the child got only %.2f of one", own)
		}
		t.Errorf("CPU = %.3f cores, want 1 ± 10%%", cores)
	}
}

func TestRealChildAllocating200MiB(t *testing.T) {
	pid, lines := testChild(t, "alloc")
	tree, err := New("", pid)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, lines, "ready")
	p, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	status, err := p.NewStatus()
	if err != nil {
		t.Fatal(err)
	}
	rss := value(t, observetest.Sample(t, tree, time.Now()), observe.RSSBytes)
	vmRSS := float64(status.VmRSS)
	t.Logf("tree RSS %.1f MiB, VmRSS %.1f MiB", rss/(1<<20), vmRSS/(1<<20))
	if math.Abs(rss-vmRSS) > 0.1*vmRSS || rss < 200<<20 {
		t.Errorf("RSS = %.0f, want within 10%% of VmRSS %.0f and at least 200 MiB", rss, vmRSS)
	}
}

func TestRealParentWithTwoChildren(t *testing.T) {
	pid, lines := testChild(t, "parent")
	expect(t, lines, "ready")
	tree, err := New("", pid)
	if err != nil {
		t.Fatal(err)
	}
	points := observetest.Sample(t, tree, time.Now())
	if n := value(t, points, observe.Processes); n != 3 {
		t.Errorf("processes = %v, want 3", n)
	}
	if n := value(t, points, observe.Threads); n < 3 {
		t.Errorf("threads = %v, want at least one per process", n)
	}
	if n := value(t, points, observe.OpenFDs); n < 9 {
		t.Errorf("open fds = %v, want at least stdin, stdout, stderr of each", n)
	}
}

// A shell that forks short-lived processes all the time: they come and go
// between listing and reading without errors, and the CPU of those that
// lived and died between two samples is counted through the shell's cutime.
func TestRealChurningChildren(t *testing.T) {
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true")
	}
	// The loop ends (after reaping its last child) when the marker is gone.
	marker := filepath.Join(t.TempDir(), "run")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pid, _ := child(t, exec.Command("sh", "-c", `while [ -e "$0" ]; do /bin/true; done`, marker))
	t.Cleanup(func() { _ = os.Remove(marker) }) // runs before child's cleanup
	tree, err := New("", pid)
	if err != nil {
		t.Fatal(err)
	}
	self, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	total := func() float64 { // the shell's own time and its reaped children's
		st, err := self.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return float64(st.UTime+st.STime) + float64(st.CUTime+st.CSTime)
	}
	before := total() / 100
	prev, cpu := time.Now(), 0.0
	observetest.Sample(t, tree, prev)
	for start := prev; time.Since(start) < time.Second; {
		now := time.Now()
		cpu += value(t, observetest.Sample(t, tree, now), observe.CPUCores) * now.Sub(prev).Seconds()
		prev = now
	}
	truth := total()/100 - before
	t.Logf("tree counted %.3f s of CPU, the shell's own+reaped time grew %.3f s", cpu, truth)
	if math.Abs(cpu-truth) > 0.1*truth+0.05 {
		t.Errorf("tree CPU %.3f s, want %.3f s ± 10%%", cpu, truth)
	}
}
