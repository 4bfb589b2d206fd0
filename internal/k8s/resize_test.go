package k8s

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestCrashedPodsOfTheSize: a pod whose container has the template's
// limits and requests (a request the template leaves out taken from the
// limit, as the API server does) is the size's; one with the old
// resources is not. Its container OOM-killed, now or before, or
// crash-looping, is said; one running, or ended otherwise and running
// again, is not.
func TestCrashedPodsOfTheSize(t *testing.T) {
	want := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("500m")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.25")},
	}}
	pod := func(res corev1.ResourceRequirements, st corev1.ContainerStatus) corev1.Pod {
		st.Name = "app"
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: res}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{st}}}
	}
	sized := want.Resources.DeepCopy()
	sized.Requests[corev1.ResourceMemory] = resource.MustParse("67108864") // defaulted from the limit
	sized.Limits[corev1.ResourceCPU] = resource.MustParse("0.5")
	if !current(pod(*sized, corev1.ContainerStatus{}), want) {
		t.Error("a pod with the template's resources (written otherwise, a request defaulted) is not taken for the size's")
	}
	if current(pod(corev1.ResourceRequirements{}, corev1.ContainerStatus{}), want) {
		t.Error("a pod without resources is taken for the size's")
	}
	bigger := want.Resources.DeepCopy()
	bigger.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
	if current(pod(*bigger, corev1.ContainerStatus{}), want) {
		t.Error("a pod with another memory limit is taken for the size's")
	}
	oom := corev1.ContainerStateTerminated{Reason: "OOMKilled"}
	for _, c := range []struct {
		st   corev1.ContainerStatus
		want string
	}{
		{corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &oom}}, "pod p: app was OOM-killed (0 restarts)"},
		{corev1.ContainerStatus{RestartCount: 2, LastTerminationState: corev1.ContainerState{Terminated: &oom},
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}, "pod p: app was OOM-killed (2 restarts)"},
		{corev1.ContainerStatus{RestartCount: 3, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}},
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}, "pod p: app crash-loops (3 restarts, the last ended Error)"},
		{corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, ""},
		{corev1.ContainerStatus{RestartCount: 1, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}},
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, ""},
	} {
		if got := strings.Join(crashed(pod(want.Resources, c.st), "app"), "; "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}
