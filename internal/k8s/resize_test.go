package k8s

import (
	"strings"
	"testing"
)

func TestParseWorkloadRef(t *testing.T) {
	for in, want := range map[string]WorkloadRef{
		"deployment/api":                   {Namespace: "default", Kind: "deployment", Name: "api"},
		"tempo/StatefulSet/ingester:tempo": {Namespace: "tempo", Kind: "statefulset", Name: "ingester", Container: "tempo"},
	} {
		if got, err := ParseWorkloadRef(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{"api": "want [NAMESPACE/]deployment/NAME", "ns/daemonset/x": `kind "daemonset"`, "a/b/c/d": "want", "deployment/": "a name"} {
		if _, err := ParseWorkloadRef(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", in, err, why)
		}
	}
}

// Counters since the rollout; a reason only with a restart since.
func TestEvidenceSince(t *testing.T) {
	before := Evidence{Periods: 100, Throttled: 10, ThrottledSeconds: 1, Restarts: 2, LastReason: "OOMKilled", MemoryMax: -1}
	now := Evidence{Periods: 700, Throttled: 310, ThrottledSeconds: 4.5, Restarts: 2, LastReason: "OOMKilled", MemoryMax: 5 << 20}
	got := now.Since(before)
	if got.Periods != 600 || got.Throttled != 300 || got.ThrottledSeconds != 3.5 || got.Restarts != 0 || got.LastReason != "" || got.MemoryMax != 5<<20 {
		t.Errorf("since: %+v", got)
	}
	now.Restarts = 3
	if got := now.Since(before); got.Restarts != 1 || got.LastReason != "OOMKilled" {
		t.Errorf("a restart since: %+v", got)
	}
}
