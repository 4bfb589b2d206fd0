package sut

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// needCgroups skips a test that confines a real process where perflab
// cannot make cgroups (not root, or no cpu and memory hierarchy), saying
// why.
func needCgroups(t *testing.T) {
	t.Helper()
	c, err := cgroupFS{}.confine("probe", Limits{CPU: 1})
	if err != nil {
		t.Skipf("cannot confine a process here: %v", err)
	}
	if err := c.remove(); err != nil {
		t.Fatal(err)
	}
}

// awaitEvidence polls the confined component's counters until ok holds
// or 20 s pass: the kernel counts as the component runs, and no signal
// says a count has been reached.
func awaitEvidence(t *testing.T, p *Process, ok func(Evidence) bool) Evidence {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ev, err := p.Evidence()
		if err != nil {
			t.Fatal(err)
		}
		if ok(ev) || time.Now().After(deadline) {
			return ev
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A component that wants a whole core, held to 0.2 of one: the kernel
// throttles it in most periods, and its groups are gone after Stop. A
// spinner the machine's other work keeps from its 0.2 cores spends its
// quota in fewer periods (7 of 20 while the suite's lines started at
// once): that is judged against what the machine gave (testutil.Measure).
func TestConfinedCPUIsThrottled(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	s := helperSpec(t, "spin", "spin")
	s.Limits = Limits{CPU: 0.2}
	machine := testutil.Measure(t)
	p := start(t, s)
	conf := p.Confinement()
	if conf == nil || conf.Limits() != s.Limits {
		t.Fatalf("confinement %+v", conf)
	}
	ev := awaitEvidence(t, p, func(e Evidence) bool { return e.Periods >= 20 })
	if ev.Periods < 20 {
		t.Errorf("%d periods counted, want 20", ev.Periods)
	}
	machine.Check(t, ev.ThrottledShare() >= 0.5 && ev.Stalled > 0, testutil.Need{}, "after %d periods: throttled in %d (%.0f %%), stalled %v; want most periods throttled",
		ev.Periods, ev.Throttled, 100*ev.ThrottledShare(), ev.Stalled)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, dir := range conf.Dirs() {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left after Stop: %v", dir, err)
		}
	}
	if last, err := p.Evidence(); err != nil || last.Periods < ev.Periods {
		t.Errorf("evidence after Stop %+v (%v), want at least %d periods", last, err, ev.Periods)
	}
}

// A component that touches 200 MiB under a 64 MiB limit is killed by the
// kernel, and its evidence says so; one that touches 16 MiB is not, and
// its peak lies between what it touched and the limit.
func TestConfinedMemory(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	s := helperSpec(t, "hungry", "alloc", "200")
	s.Env = append(s.Env, "GOGC=off")
	s.Limits = Limits{Memory: 64 << 20}
	p := start(t, s)
	select {
	case <-p.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a component touching 200 MiB under a 64 MiB limit still runs after 20 s")
	}
	ev, err := p.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	if x := p.Exit(); x == nil || x.Signal != "SIGKILL" || ev.OOMKills == 0 || ev.MemoryPeak < 60<<20 {
		t.Errorf("exit %+v, evidence %+v: want killed for want of memory, counted", x, ev)
	}

	s = helperSpec(t, "modest", "alloc", "16")
	s.Limits = Limits{Memory: 64 << 20}
	p = start(t, s)
	ev = awaitEvidence(t, p, func(e Evidence) bool { return e.MemoryPeak >= 16<<20 })
	if p.Exit() != nil || ev.OOMKills != 0 || ev.MemoryPeak < 16<<20 || ev.MemoryPeak > 64<<20 {
		t.Errorf("exit %+v, evidence %+v: want a peak of 16–64 MiB and no kill", p.Exit(), ev)
	}
}

// The groups go under perflab's own in each v1 hierarchy, or under the v2
// root; a machine without both controllers gets an error that says so.
func TestConfineFindsTheHierarchies(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/self/mountinfo", `36 35 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
37 35 0:31 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory
38 35 0:32 / /sys/fs/cgroup/unified rw,relatime shared:11 - cgroup2 cgroup2 rw
`)
	write("proc/self/cgroup", "4:memory:/process_api/5f8d\n1:cpu:/\n0::/\n")
	write("sys/fs/cgroup/memory/process_api/5f8d/cgroup.procs", "")
	write("sys/fs/cgroup/cpu/cgroup.procs", "")
	c, err := cgroupFS{root}.confine("api", Limits{CPU: 0.5, Memory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	leaf := "perflab-api-" + itoa(os.Getpid())
	if c.cpu != filepath.Join(root, "sys/fs/cgroup/cpu", leaf) || c.memory != filepath.Join(root, "sys/fs/cgroup/memory/process_api/5f8d", leaf) {
		t.Errorf("groups %s and %s", c.cpu, c.memory)
	}
	for file, want := range map[string]string{filepath.Join(c.cpu, "cpu.cfs_quota_us"): "50000",
		filepath.Join(c.cpu, "cpu.cfs_period_us"): "100000", filepath.Join(c.memory, "memory.limit_in_bytes"): "268435456"} {
		if got, err := os.ReadFile(file); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", file, got, err, want)
		}
	}
	os.RemoveAll(c.cpu)
	os.RemoveAll(c.memory)

	write("proc/self/mountinfo", "38 35 0:32 / /sys/fs/cgroup rw,relatime shared:11 - cgroup2 cgroup2 rw\n")
	write("sys/fs/cgroup/cgroup.controllers", "cpuset io memory pids\n")
	_, err = cgroupFS{root}.confine("api", Limits{CPU: 0.5})
	if err == nil || !strings.Contains(err.Error(), "no cgroup hierarchy with the cpu and memory controllers") {
		t.Errorf("v2 without cpu: %v", err)
	}
	write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	write("sys/fs/cgroup/cgroup.subtree_control", "")
	c, err = cgroupFS{root}.confine("api", Limits{CPU: 0.5, Memory: 1 << 30})
	if err != nil || !c.v2 || c.cpu != filepath.Join(root, "sys/fs/cgroup", leaf) {
		t.Fatalf("v2: %+v, %v", c, err)
	}
	if got, _ := os.ReadFile(filepath.Join(c.cpu, "cpu.max")); string(got) != "50000 100000" {
		t.Errorf("cpu.max %q", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
