package fleet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/run"
)

// alerts is run.Events keeping the alerts.
type alerts struct {
	run.Discard
	lines []string
}

func (a *alerts) Alert(msg string) { a.lines = append(a.lines, msg) }

// k8sLauncher is the launcher of a 3-worker Job with a 64Mi memory limit
// and a deadline of 15 s, without a cluster: observe is given what Look
// would see.
func k8sLauncher(t *testing.T) (*K8s, *alerts) {
	t.Helper()
	objs, err := k8s.Build(k8s.Options{Name: "load", Namespace: "perf", Image: "perflab:1", Workers: 3, Store: "s3://b/p",
		RunID: "r1", Plan: []byte("name: p\n"), Memory: "64Mi", Deadline: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ev := &alerts{}
	return &K8s{Events: ev, Objects: objs, bad: map[int]string{}, pods: map[int]string{}}, ev
}

func worker(i int, phase corev1.PodPhase, reason string) k8s.WorkerState {
	return k8s.WorkerState{Index: i, Pod: "load-" + string(rune('0'+i)) + "-x", Phase: phase, Reason: reason}
}

func TestK8sNamesAnOOMKilledWorkersLimit(t *testing.T) {
	k, _ := k8sLauncher(t)
	k.observe(k8s.Status{Workers: []k8s.WorkerState{worker(0, corev1.PodFailed, "OOMKilled, exit 137"),
		worker(1, corev1.PodRunning, ""), worker(2, corev1.PodRunning, "")}})
	bad := k.Failed()
	if len(bad) != 1 || !strings.Contains(bad[0], "pod load-0-x: OOMKilled, exit 137: it needed more than its memory limit, 64Mi (--memory)") {
		t.Errorf("failed: %v", bad)
	}
}

func TestK8sNamesAPodDeletedByOthers(t *testing.T) {
	for _, c := range []struct {
		name  string
		later k8s.WorkerState
	}{
		{"seen deleting", k8s.WorkerState{Index: 1, Pod: "load-1-x", Phase: corev1.PodRunning, Deleted: true}},
		{"gone between two looks", k8s.WorkerState{Index: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, ev := k8sLauncher(t)
			running := []k8s.WorkerState{worker(0, corev1.PodRunning, ""), worker(1, corev1.PodRunning, ""), worker(2, corev1.PodRunning, "")}
			k.observe(k8s.Status{Workers: running})
			if len(k.Failed()) != 0 {
				t.Fatalf("running workers failed: %v", k.Failed())
			}
			k.observe(k8s.Status{Workers: []k8s.WorkerState{running[0], c.later, running[2]}})
			if bad := k.Failed(); len(bad) != 1 || bad[1] != "pod load-1-x was deleted (not by perflab)" {
				t.Errorf("failed: %v; alerts %q", bad, ev.lines)
			}
		})
	}
}

func TestK8sSaysTheJobsDeadlineStoppedItsWorkers(t *testing.T) {
	k, ev := k8sLauncher(t)
	ended := k.observe(k8s.Status{Message: "DeadlineExceeded: Job was active longer than specified deadline",
		Workers: []k8s.WorkerState{worker(0, corev1.PodRunning, ""), worker(1, corev1.PodSucceeded, ""), worker(2, corev1.PodFailed, "exit 130")}})
	bad := k.Failed()
	want := "the Job's deadline, 15s (--deadline), was reached: Kubernetes stopped its pods"
	if !ended || len(bad) != 2 || !strings.HasPrefix(bad[0], want) || !strings.HasPrefix(bad[2], want) {
		t.Errorf("ended %v, failed %v; alerts %q", ended, bad, ev.lines)
	}
}

func TestK8sLeavesTheWorkersFailuresToThem(t *testing.T) {
	k, _ := k8sLauncher(t)
	k.observe(k8s.Status{Message: "FailedIndexes: Job has failed indexes",
		Workers: []k8s.WorkerState{worker(0, corev1.PodFailed, "exit 1"), worker(1, corev1.PodSucceeded, ""), worker(2, corev1.PodSucceeded, "")}})
	if bad := k.Failed(); len(bad) != 1 || !strings.HasPrefix(bad[0], "pod load-0-x: exit 1; kubectl -n perf logs load-0-x") {
		t.Errorf("failed: %v", bad)
	}
}
