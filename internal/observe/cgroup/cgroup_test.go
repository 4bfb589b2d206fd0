package cgroup

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeGroup points a symlink at testdata/<dir> and returns it and a function
// that re-points it at another one.
func fakeGroup(t *testing.T, dir string) (path string, swap func(dir string)) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "victoria-metrics.service")
	swap = func(dir string) {
		t.Helper()
		target, err := filepath.Abs(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(path)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	swap(dir)
	return path, swap
}

func TestGroupRates(t *testing.T) {
	dir, swap := fakeGroup(t, "t1")
	g := New(dir)
	if g.Name() != "cgroup "+dir || g.Dir() != dir {
		t.Errorf("Name, Dir = %q, %q", g.Name(), g.Dir())
	}
	observetest.CheckPoints(t, observetest.Sample(t, g, t0), []observe.Point{{Metric: observe.CgroupMemoryBytes, Value: 100 << 20}})
	swap("t2")
	// Two seconds: 3 s of CPU, 20 throttled periods, 1 s throttled.
	observetest.CheckPoints(t, observetest.Sample(t, g, t0.Add(2*time.Second)), []observe.Point{
		{Metric: observe.CgroupMemoryBytes, Value: 200 << 20},
		{Metric: observe.CgroupCPUCores, Value: 1.5},
		{Metric: observe.CgroupThrottledPerS, Value: 10},
		{Metric: observe.CgroupThrottledCores, Value: 0.5},
	})
	swap("t1") // the counters went down: the cgroup was created anew
	observetest.CheckPoints(t, observetest.Sample(t, g, t0.Add(3*time.Second)), []observe.Point{{Metric: observe.CgroupMemoryBytes, Value: 100 << 20}})
	swap("t2") // and the next sample has rates again
	observetest.CheckPoints(t, observetest.Sample(t, g, t0.Add(5*time.Second)), []observe.Point{
		{Metric: observe.CgroupMemoryBytes, Value: 200 << 20},
		{Metric: observe.CgroupCPUCores, Value: 1.5},
		{Metric: observe.CgroupThrottledPerS, Value: 10},
		{Metric: observe.CgroupThrottledCores, Value: 0.5},
	})
}

func TestGroupWithoutMemoryAndThrottling(t *testing.T) {
	dir, _ := fakeGroup(t, "nothrottle")
	g := New(dir)
	observetest.CheckPoints(t, observetest.Sample(t, g, t0), nil)
	// Same counters one second later: zero CPU, no throttling fields at all.
	observetest.CheckPoints(t, observetest.Sample(t, g, t0.Add(time.Second)), []observe.Point{{Metric: observe.CgroupCPUCores, Value: 0}})
}

func TestGroupErrors(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "gone")).Sample(context.Background(), t0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cgroup: error %v, want one wrapping fs.ErrNotExist", err)
	}
	dir := t.TempDir()
	for file, content := range map[string]string{"cpu.stat": "usage_usec 1\n", "memory.current": "lots\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(dir).Sample(context.Background(), t0); err == nil || !strings.Contains(err.Error(), "cannot parse") {
		t.Errorf("bad memory.current: error %v, want a parse error", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("user_usec 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir).Sample(context.Background(), t0); err == nil || !strings.Contains(err.Error(), "no usage_usec") {
		t.Errorf("cpu.stat without usage: error %v", err)
	}
}

func TestPathOfPID(t *testing.T) {
	for _, tc := range []struct {
		pid        int
		want, fail string
	}{
		{pid: 100, want: "/sys/fs/cgroup/system.slice/victoria-metrics.service"},
		{pid: 70, want: "/sys/fs/cgroup"},
		{pid: 80, want: "/sys/fs/cgroup/system.slice/nginx.service"}, // hybrid v1 + v2
		{pid: 90, fail: "no 0:: line"},                               // v1 only
		{pid: 4242, fail: "cannot read the cgroup of process 4242"},
	} {
		got, err := PathOfPID("testdata/proc", "/sys/fs/cgroup", tc.pid)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("PathOfPID(%d) = %q, %v; want an error with %q", tc.pid, got, err, tc.fail)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("PathOfPID(%d) = %q, %v; want %q", tc.pid, got, err, tc.want)
		}
	}
}

func TestOwn(t *testing.T) {
	const self = 50 // perflab, in a login session's scope
	for _, tc := range []struct {
		pid  int
		path string
		ok   bool
	}{
		{100, "/sys/fs/cgroup/system.slice/victoria-metrics.service", true},
		{80, "/sys/fs/cgroup/system.slice/nginx.service", true},
		{60, "/sys/fs/cgroup/user.slice/user-1000.slice/session-1.scope", false}, // perflab's child
		{70, "/sys/fs/cgroup", false},                                            // the root
		{95, "/sys/fs/cgroup/user.slice", false},                                 // contains perflab
	} {
		path, ok, err := Own("testdata/proc", "/sys/fs/cgroup", tc.pid, self)
		if err != nil || path != tc.path || ok != tc.ok {
			t.Errorf("Own(%d) = %q, %v, %v; want %q, %v", tc.pid, path, ok, err, tc.path, tc.ok)
		}
	}
	if _, _, err := Own("testdata/proc", "/sys/fs/cgroup", 100, 90); err == nil {
		t.Error("Own with perflab in no cgroup v2: want an error")
	}
}

// On a machine with cgroup v2, the test's own cgroup can be found and sampled.
func TestRealOwnCgroup(t *testing.T) {
	var root string
	for _, r := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(r, "cgroup.controllers")); err == nil {
			root = r
			break
		}
	}
	if root == "" {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	dir, err := PathOfPID("/proc", root, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	g := New(dir)
	start := time.Now()
	observetest.Sample(t, g, start)
	for x := 1; time.Since(start) < 100*time.Millisecond; x++ { // some CPU to see
		x ^= x << 3
	}
	points := observetest.Sample(t, g, time.Now())
	t.Logf("%s: %v", dir, points)
	for _, p := range points {
		if p.Metric == observe.CgroupCPUCores && (p.Value <= 0 || p.Value > float64(runtime.NumCPU())*1.1) {
			t.Errorf("CPU %v cores, want within (0, %d]", p.Value, runtime.NumCPU())
		}
	}
}

// A container's CPU limit is its cgroup's cpu.max, or an ancestor's (a
// Kubernetes pod's); the smallest counts.
func TestCPUQuota(t *testing.T) {
	root := t.TempDir()
	procRoot := filepath.Join(root, "proc")
	cg := filepath.Join(root, "cgroup")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(procRoot, "7", "cgroup"), "0::/kubepods/pod1/ctr\n")
	write(filepath.Join(procRoot, "8", "cgroup"), "0::/free\n")
	write(filepath.Join(cg, "cpu.max"), "max 100000\n")
	write(filepath.Join(cg, "kubepods", "cpu.max"), "max 100000\n")
	write(filepath.Join(cg, "kubepods", "pod1", "cpu.max"), "150000 100000\n")
	write(filepath.Join(cg, "kubepods", "pod1", "ctr", "cpu.max"), "200000 100000\n")
	write(filepath.Join(cg, "free", "cpu.max"), "max 100000\n")
	if q, ok := CPUQuota(procRoot, cg, 7); !ok || q != 1.5 {
		t.Errorf("pod limit 1.5 under a container limit of 2: %v, %v", q, ok)
	}
	if q, ok := CPUQuota(procRoot, cg, 8); ok {
		t.Errorf("no limit: %v", q)
	}
	if _, ok := CPUQuota(procRoot, "", 7); ok {
		t.Error("a quota without cgroup v2")
	}
}
