package cgroup

import (
	"math"
	"testing"
)

// TestCPUQuotaV1 (issue 17): on a cgroup v1 host a container's CPU limit
// is its cpu controller's cpu.cfs_quota_us over cpu.cfs_period_us, seen
// through the container's own mount (its cgroup is the mount's root) or
// from the host (the smallest quota of the cgroup and its ancestors). A
// process without a cgroup v1 cpu controller, or no quota (-1), has none.
func TestCPUQuotaV1(t *testing.T) {
	for _, c := range []struct {
		name   string
		fsRoot string
		pid    int
		want   float64
		ok     bool
	}{
		{"a container's own view: 500m", "testdata/v1/container", 10, 0.5, true},
		{"the host's view: the pod's 1.5 cores above its container's none", "testdata/v1/host", 20, 1.5, true},
		{"cgroup v2 only", "testdata/v1/host", 30, 0, false},
		{"no such process", "testdata/v1/host", 40, 0, false},
	} {
		q, ok := CPUQuotaV1("testdata/v1/proc", c.fsRoot, c.pid)
		if ok != c.ok || math.Abs(q-c.want) > 1e-9 {
			t.Errorf("%s: %v %v, want %v %v", c.name, q, ok, c.want, c.ok)
		}
		if l, lok := CPULimit("testdata/v1/proc", c.fsRoot, "", c.pid); lok != c.ok || l != q {
			t.Errorf("%s: CPULimit %v %v, want CPUQuotaV1's", c.name, l, lok)
		}
	}
}
