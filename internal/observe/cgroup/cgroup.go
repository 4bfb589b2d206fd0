// Package cgroup samples a cgroup v2 directory: memory.current, and the CPU
// usage and throttling counters of cpu.stat turned into rates. It also finds
// a process's cgroup and says whether that cgroup is the component's own,
// that is, one that measures the component and nothing of perflab.
//
// A cgroup counts the CPU of every process that ever ran in it, including
// children that exited between two samples, so it is the better CPU figure
// for a component that has a cgroup of its own (systemd unit, container).
package cgroup

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// Group is a Source for one cgroup v2 directory.
type Group struct {
	dir  string
	prev cpuStat
	at   time.Time // time of prev; zero before the first sample
}

var _ observe.Source = (*Group)(nil)

// cpuStat holds the cpu.stat fields Group uses; has tells which were there.
type cpuStat struct {
	usage, throttled, throttledUsec uint64
	hasThrottling                   bool
}

// New returns a Group for the cgroup directory dir, for instance
// "/sys/fs/cgroup/system.slice/victoria-metrics.service".
func New(dir string) *Group { return &Group{dir: dir} }

// Name implements observe.Source.
func (g *Group) Name() string { return "cgroup " + g.dir }

// Dir returns the cgroup directory.
func (g *Group) Dir() string { return g.dir }

// Sample implements observe.Source: CgroupMemoryBytes when the memory
// controller is enabled for the group, and from the second sample on
// CgroupCPUCores, plus CgroupThrottledPerS and CgroupThrottledCores when the
// cpu controller is (cpu.stat has throttling fields only then). When a
// counter went down (the cgroup was removed and created again) the rates
// are left out of that sample, which becomes the new baseline.
func (g *Group) Sample(_ context.Context, now time.Time) ([]observe.Point, error) {
	var points []observe.Point
	mem, err := readUint(filepath.Join(g.dir, "memory.current"))
	switch {
	case err == nil:
		points = append(points, observe.Point{Metric: observe.CgroupMemoryBytes, Value: float64(mem)})
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	cur, err := readCPUStat(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return nil, err
	}
	if !g.at.IsZero() {
		points = append(points, rates(g.prev, cur, now.Sub(g.at).Seconds())...)
	}
	g.prev, g.at = cur, now
	return points, nil
}

func rates(prev, cur cpuStat, dt float64) []observe.Point {
	if dt <= 0 || cur.usage < prev.usage {
		return nil
	}
	points := []observe.Point{{Metric: observe.CgroupCPUCores, Value: float64(cur.usage-prev.usage) / 1e6 / dt}}
	if prev.hasThrottling && cur.hasThrottling &&
		cur.throttled >= prev.throttled && cur.throttledUsec >= prev.throttledUsec {
		points = append(points,
			observe.Point{Metric: observe.CgroupThrottledPerS, Value: float64(cur.throttled-prev.throttled) / dt},
			observe.Point{Metric: observe.CgroupThrottledCores, Value: float64(cur.throttledUsec-prev.throttledUsec) / 1e6 / dt})
	}
	return points
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %s: %w", path, err)
	}
	return v, nil
}

// readCPUStat reads the "key value" lines of cpu.stat.
func readCPUStat(path string) (cpuStat, error) {
	var s cpuStat
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("cannot read %s: %w", path, err)
	}
	fields := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return s, fmt.Errorf("cannot parse %s: %s: %w", path, k, err)
		}
		fields[k] = n
	}
	usage, ok := fields["usage_usec"]
	if !ok {
		return s, fmt.Errorf("cannot parse %s: no usage_usec", path)
	}
	s.usage = usage
	s.throttled, ok = fields["nr_throttled"]
	s.throttledUsec, s.hasThrottling = fields["throttled_usec"]
	s.hasThrottling = s.hasThrottling && ok
	return s, nil
}

// Root is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a
// unified host, /sys/fs/cgroup/unified on a hybrid one; "" without v2.
func Root() string {
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
			return dir
		}
	}
	return ""
}

// CPUQuota is the smallest CPU quota, in cores, of the cgroup v2 of process
// pid and of its ancestors up to cgroupRoot (cpu.max "QUOTA PERIOD", as a
// container's CPU limit sets it); false when none has one.
func CPUQuota(procRoot, cgroupRoot string, pid int) (float64, bool) {
	if cgroupRoot == "" {
		return 0, false
	}
	dir, err := PathOfPID(procRoot, cgroupRoot, pid)
	if err != nil {
		return 0, false
	}
	root := filepath.Clean(cgroupRoot)
	quota, found := 0.0, false
	for dir = filepath.Clean(dir); strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
		if q, ok := readCPUMax(filepath.Join(dir, "cpu.max")); ok && (!found || q < quota) {
			quota, found = q, true
		}
		if dir == root {
			break
		}
	}
	return quota, found
}

// readCPUMax reads a cpu.max file: "QUOTA PERIOD" in microseconds, or
// "max PERIOD" without a quota.
func readCPUMax(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0, false
	}
	return quota / period, true
}

// PathOfPID returns the cgroup v2 directory of process pid: the path on its
// "0::" line of <procRoot>/<pid>/cgroup, under cgroupRoot (where cgroup2 is
// mounted, usually /sys/fs/cgroup).
func PathOfPID(procRoot, cgroupRoot string, pid int) (string, error) {
	rel, err := cgroupOf(procRoot, pid)
	if err != nil {
		return "", err
	}
	return filepath.Join(cgroupRoot, rel), nil
}

// cgroupOf returns the cgroup path of pid relative to the hierarchy's root.
func cgroupOf(procRoot string, pid int) (string, error) {
	path := filepath.Join(procRoot, strconv.Itoa(pid), "cgroup")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the cgroup of process %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rel, ok := strings.CutPrefix(line, "0::"); ok {
			return rel, nil
		}
	}
	return "", fmt.Errorf("cannot find the cgroup v2 of process %d: no 0:: line in %s (cgroup v1 only?)", pid, path)
}

// Own returns the cgroup v2 directory of pid and whether it is the
// process's own: not the root cgroup, not perflab's (selfPID's) cgroup and
// not one that contains perflab's, so that its figures are the component's
// alone. Other processes may share it (a container, a systemd unit).
func Own(procRoot, cgroupRoot string, pid, selfPID int) (path string, ok bool, err error) {
	rel, err := cgroupOf(procRoot, pid)
	if err != nil {
		return "", false, err
	}
	self, err := cgroupOf(procRoot, selfPID)
	if err != nil {
		return "", false, err
	}
	rel, self = filepath.Clean(rel), filepath.Clean(self)
	contains := rel == self || strings.HasPrefix(self, rel+"/")
	return filepath.Join(cgroupRoot, rel), rel != "/" && !contains, nil
}
