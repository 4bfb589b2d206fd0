package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPULimit returns the CPU a process may use by its cgroup v2 quota, in
// cores: the smallest cpu.max quota/period of its cgroup and every
// ancestor up to cgroupRoot. limited is false when none sets one ("max"),
// as outside a container with a CPU limit. A Kubernetes container's CPU
// limit is its cgroup's cpu.max.
func CPULimit(procRoot, cgroupRoot string, pid int) (cores float64, limited bool, err error) {
	rel, err := cgroupOf(procRoot, pid)
	if err != nil {
		return 0, false, err
	}
	for dir := filepath.Clean("/" + rel); ; dir = filepath.Dir(dir) {
		c, ok, err := readCPUMax(filepath.Join(cgroupRoot, dir, "cpu.max"))
		if err != nil {
			return 0, false, err
		}
		if ok && (!limited || c < cores) {
			cores, limited = c, true
		}
		if dir == "/" {
			return cores, limited, nil
		}
	}
}

// readCPUMax reads "QUOTA PERIOD" or "max PERIOD"; a missing file (the
// root cgroup has none, nor a cgroup without the cpu controller) sets no
// limit.
func readCPUMax(path string) (float64, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cannot read the CPU limit: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false, fmt.Errorf("cannot read the CPU limit: %s holds %q", path, strings.TrimSpace(string(b)))
	}
	if f[0] == "max" {
		return 0, false, nil
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0, false, fmt.Errorf("cannot read the CPU limit: %s holds %q", path, strings.TrimSpace(string(b)))
	}
	return quota / period, true, nil
}
