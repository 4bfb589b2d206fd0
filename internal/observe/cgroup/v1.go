package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// CPULimit is the CPU limit of process pid, in cores: the smallest quota
// of its cgroup and of their ancestors it can see, in the cgroup v2
// hierarchy at cgroupRoot (cpu.max) and in the cgroup v1 cpu hierarchy
// (cpu.cfs_quota_us / cpu.cfs_period_us), as a container's CPU limit sets
// one or the other; false when neither has a quota. fsRoot is where the
// mount points of <procRoot>/<pid>/mountinfo are ("/" but in tests).
func CPULimit(procRoot, fsRoot, cgroupRoot string, pid int) (float64, bool) {
	q2, ok2 := CPUQuota(procRoot, cgroupRoot, pid)
	q1, ok1 := CPUQuotaV1(procRoot, fsRoot, pid)
	switch {
	case ok1 && ok2:
		return min(q1, q2), true
	case ok1:
		return q1, true
	}
	return q2, ok2
}

// CPUQuotaV1 is the smallest CPU quota, in cores, of the cgroup v1 cpu
// controller of process pid and of its ancestors up to the root of the
// mount the process sees it through; false when none has one (a quota of
// -1 is none).
func CPUQuotaV1(procRoot, fsRoot string, pid int) (float64, bool) {
	dir, top, ok := v1CPUDir(procRoot, fsRoot, pid)
	if !ok {
		return 0, false
	}
	quota, found := 0.0, false
	for ; strings.HasPrefix(dir, top); dir = filepath.Dir(dir) {
		if q, ok := readCFS(dir); ok && (!found || q < quota) {
			quota, found = q, true
		}
		if dir == top {
			break
		}
	}
	return quota, found
}

// v1CPUDir is the directory of pid's cgroup in the cgroup v1 cpu hierarchy
// as the process sees it mounted, and the mount point above which its
// ancestors are not visible.
func v1CPUDir(procRoot, fsRoot string, pid int) (dir, top string, ok bool) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return "", "", false
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return "", "", false
	}
	groups, err := p.Cgroups()
	if err != nil {
		return "", "", false
	}
	i := slices.IndexFunc(groups, func(g procfs.Cgroup) bool { return g.HierarchyID != 0 && slices.Contains(g.Controllers, "cpu") })
	if i < 0 {
		return "", "", false
	}
	mounts, err := p.MountInfo()
	if err != nil {
		return "", "", false
	}
	for _, m := range mounts {
		if _, cpu := m.SuperOptions["cpu"]; m.FSType != "cgroup" || !cpu {
			continue
		}
		rel, inside := strings.CutPrefix(groups[i].Path, m.Root)
		if !inside || m.Root != "/" && rel != "" && !strings.HasPrefix(rel, "/") {
			continue
		}
		top = filepath.Join(fsRoot, m.MountPoint)
		return filepath.Join(top, rel), top, true
	}
	return "", "", false
}

// readCFS reads a cgroup v1 CPU quota: cpu.cfs_quota_us over
// cpu.cfs_period_us, in cores; false for none (-1) or unreadable files.
func readCFS(dir string) (float64, bool) {
	read := func(name string) (float64, bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		return v, err == nil
	}
	quota, ok1 := read("cpu.cfs_quota_us")
	period, ok2 := read("cpu.cfs_period_us")
	if !ok1 || !ok2 || quota <= 0 || period <= 0 {
		return 0, false
	}
	return quota / period, true
}
