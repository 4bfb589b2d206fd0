package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of `perflab k8s run`.
const (
	k8sPoll         = 2 * time.Second  // how often the Job's pods are looked at
	k8sDeleteWithin = 30 * time.Second // how long deleting the run's objects may take
)

// K8s are the workers of `perflab k8s run`: the pods of an Indexed
// Job, watched until the run ends.
type K8s struct {
	Events  run.Events
	Client  k8s.Client
	Objects k8s.Objects
	Keep    bool // leave the run's objects in the cluster at the end

	created bool // the objects are this run's: stop deletes them
	mu      sync.Mutex
	bad     map[int]string // workers that failed or will not start: why
	pods    map[int]string // each worker's pod
	jobFail string         // why the Job failed, when it did
	last    []k8s.WorkerState
	cancel  context.CancelFunc
	watched chan struct{}
}

var _ Launcher = (*K8s)(nil)

// Start creates the run's objects and watches the Job's pods, telling
// every change of a worker's state.
func (k *K8s) Start(ctx context.Context, sr shard.Run, _ string, _ int) error {
	k.bad, k.pods = map[int]string{}, map[int]string{}
	if err := k8s.Create(ctx, k.Client, k.Objects); err != nil {
		return err
	}
	k.created = true
	ns, name := k.Objects.Job.Namespace, k.Objects.Job.Name
	k.Events.Note(fmt.Sprintf("created Job %s/%s (run %s)", ns, name, sr.ID))
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	k.cancel, k.watched = cancel, make(chan struct{})
	go func() {
		defer close(k.watched)
		k.watch(wctx)
	}()
	return nil
}

// watch looks at the Job every k8sPoll until it ends (complete or failed)
// or ctx does, telling each worker's changes. A failed worker does not end
// it: the others go on, and so may fail in turn.
func (k *K8s) watch(ctx context.Context) {
	t := time.NewTicker(k8sPoll)
	defer t.Stop()
	lastErr := ""
	for {
		st, err := k8s.Look(ctx, k.Client, k.Objects.Job)
		switch {
		case err != nil && ctx.Err() == nil && err.Error() != lastErr:
			k.Events.Alert(fmt.Sprintf("warning: %v", err))
			lastErr = err.Error()
		case err == nil:
			lastErr = ""
			if k.observe(st) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh looks at the Job's pods now, so that Failed knows what its
// next poll would: a phase's failures are named with it.
func (k *K8s) Refresh(ctx context.Context) {
	if st, err := k8s.Look(ctx, k.Client, k.Objects.Job); err == nil {
		k.observe(st)
	}
}

// observe takes in one look at the Job: each worker's change, and the
// Job's own end, which it returns.
func (k *K8s) observe(st k8s.Status) (ended bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if st.Message != "" && k.jobFail == "" { // first: it is why its pods fail
		k.jobFailed(st)
	}
	for i, w := range st.Workers {
		if i >= len(k.last) || k.last[i] != w {
			k.changed(w)
		}
	}
	k.last = st.Workers
	return st.Done || st.Message != ""
}

// changed tells a worker's new state and remembers the failed ones: a
// pod that failed or will not start, and a pod deleted (or gone) that
// perflab did not delete.
func (k *K8s) changed(w k8s.WorkerState) {
	known := k.pods[w.Index]
	if w.Pod != "" {
		k.pods[w.Index] = w.Pod
	}
	switch {
	case w.Phase == "" && known != "":
		k.fail(w.Index, fmt.Sprintf("pod %s was deleted (not by perflab)", known))
		k.Events.Alert(fmt.Sprintf("worker %d: pod %s is gone", w.Index, known))
		return
	case w.Phase == "":
		return
	}
	text := w.String()
	if w.Message != "" {
		text += ": " + w.Message
	}
	if w.Deleted && w.Phase != corev1.PodSucceeded {
		text += "; deleted"
		k.fail(w.Index, fmt.Sprintf("pod %s was deleted (not by perflab)", w.Pod))
	}
	k.Events.Alert(text + "; pod " + w.Pod)
	if w.Failed() {
		k.fail(w.Index, k.why(w))
	}
}

// fail remembers why worker i failed, its first reason.
func (k *K8s) fail(i int, why string) {
	if _, ok := k.bad[i]; !ok {
		k.bad[i] = why
	}
}

// why says why worker w failed, as "pod NAME: REASON", with what
// Kubernetes says of it and, for an OOM kill, the worker's memory limit.
func (k *K8s) why(w k8s.WorkerState) string {
	why := string(w.Phase)
	if w.Reason != "" {
		why = w.Reason
	}
	if w.Message != "" {
		why += ": " + w.Message
	}
	if strings.HasPrefix(w.Reason, "OOMKilled") {
		limit := k.Objects.Job.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		if !limit.IsZero() {
			why += fmt.Sprintf(": it needed more than its memory limit, %s (--memory)", limit.String())
		}
	}
	return fmt.Sprintf("pod %s: %s", w.Pod, why)
}

// jobFailed takes note of the Job's own failure: when it is not the
// workers' failures told again (its deadline, say), every worker that has
// not succeeded was stopped by it.
func (k *K8s) jobFailed(st k8s.Status) {
	k.jobFail = "the Job failed: " + st.Message
	for _, r := range []string{"FailedIndexes", "BackoffLimitExceeded"} {
		if strings.HasPrefix(st.Message, r+":") {
			return
		}
	}
	if d := k.Objects.Job.Spec.ActiveDeadlineSeconds; d != nil && strings.HasPrefix(st.Message, "DeadlineExceeded") {
		k.jobFail = fmt.Sprintf("the Job's deadline, %v (--deadline), was reached: Kubernetes stopped its pods", time.Duration(*d)*time.Second)
	}
	k.Events.Alert(fmt.Sprintf("Job %s/%s: %s", k.Objects.Job.Namespace, k.Objects.Job.Name, k.jobFail))
	for _, w := range st.Workers {
		if w.Phase != corev1.PodSucceeded {
			k.fail(w.Index, k.jobFail)
		}
	}
}

func (k *K8s) Failed() map[int]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[int]string, len(k.bad))
	for i, why := range k.bad {
		if hint := k.look(i); hint != "" {
			why += "; " + hint
		}
		out[i] = why
	}
	return out
}

// look says how to see more of worker i: its log, or what Kubernetes
// says of a pod whose container never ran; nothing of a deleted pod.
func (k *K8s) look(i int) string {
	ns, pod := k.Objects.Job.Namespace, k.pods[i]
	if strings.Contains(k.bad[i], "was deleted") {
		return ""
	}
	if strings.Contains(k.bad[i], "Image") || strings.Contains(k.bad[i], "Unschedulable") || strings.Contains(k.bad[i], "CreateContainer") {
		return "kubectl -n " + ns + " describe pod " + pod
	}
	return "kubectl -n " + ns + " logs " + pod
}

// Stop stops watching and deletes the run's objects, unless --keep.
func (k *K8s) Stop(bool) {
	if k.cancel != nil {
		k.cancel()
		<-k.watched
	}
	if !k.created {
		return
	}
	ns, name := k.Objects.Job.Namespace, k.Objects.Job.Name
	if k.Keep {
		k.Events.Note(fmt.Sprintf("kept Job, ConfigMap and ServiceAccount %s/%s (--keep): kubectl -n %s delete job,configmap,serviceaccount %s",
			ns, name, ns, name))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), k8sDeleteWithin)
	defer cancel()
	if err := k8s.Delete(ctx, k.Client, k.Objects); err != nil {
		k.Events.Warn(fmt.Sprintf("%v; delete them with: kubectl -n %s delete job,configmap,serviceaccount %s", err, ns, name))
		return
	}
	k.Events.Note(fmt.Sprintf("deleted Job %s/%s and its ConfigMap and ServiceAccount", ns, name))
}

func (k *K8s) Logs(i int) string {
	return fmt.Sprintf("kubectl -n %s logs -l batch.kubernetes.io/job-completion-index=%d,%s=%s", k.Objects.Job.Namespace, i,
		k8s.LabelRunID, k.Objects.Job.Labels[k8s.LabelRunID])
}
