package sut

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits confine a component perflab starts to a size (perflab size
// --verify): its CPU as a CFS quota, its memory as a hard limit, in
// cgroups perflab makes for it and removes when it stops. The zero Limits
// confine nothing.
type Limits struct {
	CPU    float64 // cores: a quota of CPU × cfsPeriod per period; 0 leaves the CPU free
	Memory int64   // bytes; 0 leaves the memory free
}

// IsZero reports whether l confines nothing.
func (l Limits) IsZero() bool { return l.CPU <= 0 && l.Memory <= 0 }

// cfsPeriod is the CFS period of a quota, the kernel's and Kubernetes'
// default: a limit of 0.5 cores is 50 ms of CPU time in every 100 ms.
const cfsPeriod = 100 * time.Millisecond

// Evidence is what the kernel counted of a confined component: how often
// its CPU quota held it back, and how close its memory came to its limit.
type Evidence struct {
	Periods   uint64        // CFS periods in which it ran
	Throttled uint64        // of those, periods in which its quota ran out
	Stalled   time.Duration // time its threads waited for the next period
	// MemoryPeak is the most memory it was charged at once (v1
	// memory.max_usage_in_bytes, v2 memory.peak); -1 when the kernel does
	// not say (cgroup v2 before Linux 5.19).
	MemoryPeak int64
	AtLimit    uint64 // times it reached its memory limit (v1 failcnt, v2 memory.events max)
	OOMKills   uint64 // processes the kernel killed for want of memory (oom_kill)
}

// ThrottledShare is the share of the periods in which the quota ran out.
func (e Evidence) ThrottledShare() float64 {
	if e.Periods == 0 {
		return 0
	}
	return float64(e.Throttled) / float64(e.Periods)
}

// Confinement is the cgroups that hold one confined component: one per
// controller on cgroup v1 (cpu, memory), one on v2.
type Confinement struct {
	limits  Limits
	v2      bool
	removed bool   // remove ran: the groups are gone
	cpu     string // the directory whose cpu.* files apply
	memory  string // the directory whose memory.* files apply
}

// cgroupFS says where the cgroup hierarchies are: root for its files
// (/proc/self/mountinfo, /proc/self/cgroup, and the mount points in them),
// "" or "/" on the real system; tests give a directory of their own.
type cgroupFS struct{ root string }

func (f cgroupFS) path(p string) string { return filepath.Join(f.root, p) }

// confine makes the cgroups of component name (perflab-<name>-<pid>, so
// that two perflab runs never share one) and writes l into them; add then
// puts a process in. It needs root, or cgroups delegated to perflab's
// user; the error says which file it could not write.
func (f cgroupFS) confine(name string, l Limits) (*Confinement, error) {
	mounts, err := f.mounts()
	if err != nil {
		return nil, err
	}
	own, err := f.ownGroups()
	if err != nil {
		return nil, err
	}
	leaf := fmt.Sprintf("perflab-%s-%d", name, os.Getpid())
	c := &Confinement{limits: l}
	switch {
	case mounts["cpu"] != "" && mounts["memory"] != "": // v1 (or hybrid): a group in each hierarchy, under perflab's own
		c.cpu = filepath.Join(f.path(mounts["cpu"]), own["cpu"], leaf)
		c.memory = filepath.Join(f.path(mounts["memory"]), own["memory"], leaf)
	case mounts[""] != "": // v2: under the root, which may hold processes and children with controllers
		c.v2 = true
		c.cpu = filepath.Join(f.path(mounts[""]), leaf)
		c.memory = c.cpu
	default:
		return nil, errors.New("no cgroup hierarchy with the cpu and memory controllers is mounted (see /proc/self/mountinfo)")
	}
	if err := c.make(); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// make creates the groups and writes the limits.
func (c *Confinement) make() error {
	for _, dir := range c.dirs() {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("cannot make cgroup %s: %w (confining a component needs root, or a cgroup delegated to perflab's user)", dir, err)
		}
	}
	if c.v2 {
		if err := enableControllers(filepath.Dir(c.cpu)); err != nil {
			return err
		}
	}
	return c.writeLimits()
}

func (c *Confinement) writeLimits() error {
	quota := int64(c.limits.CPU * float64(cfsPeriod/time.Microsecond))
	period := int64(cfsPeriod / time.Microsecond)
	var files [][2]string // file, value: in order (v1 swap limits only after the memory limit)
	switch {
	case c.v2:
		if c.limits.CPU > 0 {
			files = append(files, [2]string{filepath.Join(c.cpu, "cpu.max"), fmt.Sprintf("%d %d", quota, period)})
		}
		if c.limits.Memory > 0 {
			files = append(files, [2]string{filepath.Join(c.memory, "memory.max"), strconv.FormatInt(c.limits.Memory, 10)},
				[2]string{filepath.Join(c.memory, "memory.swap.max"), "0"})
		}
	default:
		if c.limits.CPU > 0 {
			files = append(files, [2]string{filepath.Join(c.cpu, "cpu.cfs_period_us"), strconv.FormatInt(period, 10)},
				[2]string{filepath.Join(c.cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)})
		}
		if c.limits.Memory > 0 {
			files = append(files, [2]string{filepath.Join(c.memory, "memory.limit_in_bytes"), strconv.FormatInt(c.limits.Memory, 10)},
				[2]string{filepath.Join(c.memory, "memory.memsw.limit_in_bytes"), strconv.FormatInt(c.limits.Memory, 10)})
		}
	}
	for _, f := range files {
		err := os.WriteFile(f[0], []byte(f[1]), 0o644)
		if err != nil && !(isSwapFile(f[0]) && errors.Is(err, fs.ErrNotExist)) { // no swap accounting: no swap to limit
			return fmt.Errorf("cannot write %s to %s: %w", f[1], f[0], err)
		}
	}
	return nil
}

func isSwapFile(path string) bool {
	return strings.Contains(filepath.Base(path), "swap") || strings.Contains(filepath.Base(path), "memsw")
}

// enableControllers makes the cpu and memory controllers available to
// the children of a v2 group.
func enableControllers(dir string) error {
	path := filepath.Join(dir, "cgroup.subtree_control")
	if err := os.WriteFile(path, []byte("+cpu +memory"), 0o644); err != nil {
		return fmt.Errorf("cannot enable the cpu and memory controllers in %s: %w", path, err)
	}
	return nil
}

func (c *Confinement) dirs() []string {
	if c.cpu == c.memory {
		return []string{c.cpu}
	}
	return []string{c.cpu, c.memory}
}

// add moves process pid into the groups; the processes it starts from
// then on are in them too.
func (c *Confinement) add(pid int) error {
	for _, dir := range c.dirs() {
		path := filepath.Join(dir, "cgroup.procs")
		if err := os.WriteFile(path, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cannot move pid %d into cgroup %s: %w", pid, dir, err)
		}
	}
	return nil
}

// Limits are the limits c holds its component to.
func (c *Confinement) Limits() Limits { return c.limits }

// Dirs are the cgroup directories of c, for messages.
func (c *Confinement) Dirs() []string { return c.dirs() }

// Evidence reads what the kernel counted of the component so far.
func (c *Confinement) Evidence() (Evidence, error) {
	e := Evidence{MemoryPeak: -1}
	cpu, err := readKeyed(filepath.Join(c.cpu, "cpu.stat"))
	if err != nil {
		return e, err
	}
	e.Periods, e.Throttled = cpu["nr_periods"], cpu["nr_throttled"]
	if c.v2 {
		e.Stalled = time.Duration(cpu["throttled_usec"]) * time.Microsecond
		return e, c.memoryV2(&e)
	}
	e.Stalled = time.Duration(cpu["throttled_time"])
	return e, c.memoryV1(&e)
}

func (c *Confinement) memoryV1(e *Evidence) error {
	peak, err := readInt(filepath.Join(c.memory, "memory.max_usage_in_bytes"))
	if err != nil {
		return err
	}
	fails, err := readInt(filepath.Join(c.memory, "memory.failcnt"))
	if err != nil {
		return err
	}
	oom, err := readKeyed(filepath.Join(c.memory, "memory.oom_control"))
	e.MemoryPeak, e.AtLimit, e.OOMKills = peak, uint64(fails), oom["oom_kill"]
	return err
}

func (c *Confinement) memoryV2(e *Evidence) error {
	if peak, err := readInt(filepath.Join(c.memory, "memory.peak")); err == nil {
		e.MemoryPeak = peak
	}
	events, err := readKeyed(filepath.Join(c.memory, "memory.events"))
	e.AtLimit, e.OOMKills = events["max"], events["oom_kill"]
	return err
}

// remove removes the groups, once the processes in them are gone; the
// kernel may take a moment to let go of the last one's.
func (c *Confinement) remove() error {
	c.removed = true
	var errs []error
	for _, dir := range slices.Backward(c.dirs()) {
		errs = append(errs, removeGroup(dir))
	}
	return errors.Join(errs...)
}

func removeGroup(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cannot remove cgroup %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond) // EBUSY until the kernel has freed the last task; nothing to wait on
	}
}

// mounts are the mount points of the cgroup hierarchies, by v1
// controller ("cpu", "memory"), and of the v2 hierarchy ("") when its
// root offers both controllers.
func (f cgroupFS) mounts() (map[string]string, error) {
	file, err := os.Open(f.path("/proc/self/mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("cannot find the cgroup hierarchies: %w", err)
	}
	defer file.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		// 36 35 0:30 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch point := fields[4]; tail[0] {
		case "cgroup":
			for _, o := range strings.Split(tail[2], ",") {
				if o == "cpu" || o == "memory" {
					out[o] = point
				}
			}
		case "cgroup2":
			if ctl, err := os.ReadFile(filepath.Join(f.path(point), "cgroup.controllers")); err == nil &&
				slices.Contains(strings.Fields(string(ctl)), "cpu") && slices.Contains(strings.Fields(string(ctl)), "memory") {
				out[""] = point
			}
		}
	}
	return out, sc.Err()
}

// ownGroups are perflab's own groups, by v1 controller, from
// /proc/self/cgroup: a confined component's groups go under them, so that
// a perflab in a container confines within the container's.
func (f cgroupFS) ownGroups() (map[string]string, error) {
	data, err := os.ReadFile(f.path("/proc/self/cgroup"))
	if err != nil {
		return nil, fmt.Errorf("cannot read perflab's own cgroups: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3) // 4:memory:/process_api/5f8d; 1:cpu,cpuacct:/
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out, nil
}

// readKeyed reads a file of "key value" lines (cpu.stat, memory.events,
// memory.oom_control).
func readKeyed(path string) (map[string]uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); ok && err == nil {
			out[k] = n
		}
	}
	return out, nil
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
