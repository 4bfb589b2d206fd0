package k8s

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Create creates objs in order. If one already exists (a run id used
// twice), nothing more is created and the error says which; what this call
// created is deleted again.
func Create(ctx context.Context, c Client, objs Objects) error {
	ns := objs.Job.Namespace
	var made Objects
	fail := func(what string, err error) error {
		_ = Delete(context.WithoutCancel(ctx), c, made)
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create %s %s/%s: it exists already (another run with this name? delete it or choose another --name)", what, ns, objs.Job.Name)
		}
		return fmt.Errorf("cannot create %s %s/%s: %w", what, ns, objs.Job.Name, err)
	}
	if err := c.Create(ctx, objs.ConfigMap); err != nil {
		return fail("ConfigMap", err)
	}
	made.ConfigMap = objs.ConfigMap
	if objs.ServiceAccount != nil {
		if err := c.Create(ctx, objs.ServiceAccount); err != nil {
			return fail("ServiceAccount", err)
		}
		made.ServiceAccount = objs.ServiceAccount
	}
	if err := c.Create(ctx, objs.Job); err != nil {
		return fail("Job", err)
	}
	made.Job = objs.Job // what the API server made of it
	if objs.Job.Spec.BackoffLimitPerIndex == nil {
		_ = Delete(context.WithoutCancel(ctx), c, made)
		return fmt.Errorf("cannot run Job %s/%s: the cluster dropped its backoffLimitPerIndex (Kubernetes before 1.29, or "+
			"the JobBackoffLimitPerIndex feature off), so a failed worker would be retried and run its share of the load twice", ns, objs.Job.Name)
	}
	return nil
}

// Delete removes whatever of objs exists: the Job with its pods (foreground
// propagation: the call returns once the API server has accepted it), then
// the ServiceAccount and the ConfigMap. Objects already gone are no error;
// every other failure is returned, joined.
func Delete(ctx context.Context, c Client, objs Objects) error {
	fg := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{PropagationPolicy: &fg}
	var errs []error
	keep := func(what, name string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cannot delete %s %s: %w", what, name, err))
		}
	}
	if j := objs.Job; j != nil {
		keep("Job", j.Name, c.Delete(ctx, j, opts))
	}
	if sa := objs.ServiceAccount; sa != nil {
		keep("ServiceAccount", sa.Name, c.Delete(ctx, sa, opts))
	}
	if cm := objs.ConfigMap; cm != nil {
		keep("ConfigMap", cm.Name, c.Delete(ctx, cm, opts))
	}
	return errors.Join(errs...)
}

// WorkerState is what Kubernetes says of one worker's pod.
type WorkerState struct {
	Index  int
	Pod    string
	Phase  corev1.PodPhase // Pending, Running, Succeeded, Failed; "" before its pod exists
	Reason string          // why it waits or why it ended: ImagePullBackOff, OOMKilled, Error (exit 2), …
	// Message is what Kubernetes says of Reason, when it says more
	// (`Container image "…" is not present with pull policy of Never`).
	Message string
	// Deleted says the pod is being deleted: it gets SIGTERM, then goes.
	Deleted bool
}

// Failed says whether the worker's pod ended in failure, or waits for
// something that will not come by itself (its image cannot be pulled, its
// configuration is wrong).
func (w WorkerState) Failed() bool {
	if w.Phase == corev1.PodFailed {
		return true
	}
	switch w.Reason {
	case "ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff":
		return true
	}
	return false
}

func (w WorkerState) String() string {
	phase := string(w.Phase)
	if phase == "" {
		phase = "not created"
	}
	if w.Reason != "" {
		return fmt.Sprintf("worker %d: %s (%s)", w.Index, phase, w.Reason)
	}
	return fmt.Sprintf("worker %d: %s", w.Index, phase)
}

// Status is one look at a run's Job and its workers.
type Status struct {
	Workers  []WorkerState // by index, one per completion
	Done     bool          // the Job completed: every worker succeeded
	Failed   bool          // the Job failed, or a worker did
	Message  string        // the Job's failure condition, when it has one
	Finished int           // workers that ended, successfully or not
}

// Look reads the Job and its pods once.
func Look(ctx context.Context, c Client, job *batchv1.Job) (Status, error) {
	var j batchv1.Job
	if err := c.Get(ctx, job.Namespace, job.Name, &j); err != nil {
		return Status{}, fmt.Errorf("cannot read Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	sel := labels.SelectorFromSet(job.Spec.Template.Labels).String()
	var pods corev1.PodList
	if err := c.List(ctx, job.Namespace, sel, &pods); err != nil {
		return Status{}, fmt.Errorf("cannot list the pods of Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	n := 1
	if job.Spec.Completions != nil {
		n = int(*job.Spec.Completions)
	}
	st := Status{Workers: workerStates(n, pods.Items)}
	for _, w := range st.Workers {
		if w.Phase == corev1.PodSucceeded || w.Phase == corev1.PodFailed {
			st.Finished++
		}
		st.Failed = st.Failed || w.Failed()
	}
	for _, cond := range j.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			st.Done = true
		case batchv1.JobFailed, batchv1.JobFailureTarget: // the target comes first, before its pods are stopped
			st.Failed, st.Message = true, fmt.Sprintf("%s: %s", cond.Reason, cond.Message)
		}
	}
	return st, nil
}

// workerStates is each index's newest pod's state.
func workerStates(n int, pods []corev1.Pod) []WorkerState {
	ws := make([]WorkerState, n)
	newest := make([]time.Time, n)
	for i := range ws {
		ws[i].Index = i
	}
	sort.SliceStable(pods, func(a, b int) bool { return pods[a].CreationTimestamp.Before(&pods[b].CreationTimestamp) })
	for _, p := range pods {
		i, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || i < 0 || i >= n {
			continue
		}
		if t := p.CreationTimestamp.Time; t.Before(newest[i]) {
			continue
		}
		newest[i] = p.CreationTimestamp.Time
		reason, msg := podReason(p)
		ws[i] = WorkerState{Index: i, Pod: p.Name, Phase: p.Status.Phase, Reason: reason, Message: msg,
			Deleted: p.DeletionTimestamp != nil}
	}
	return ws
}

// podReason is the reason a pod's container waits or ended, or the pod's
// own, or why it cannot be scheduled; with what Kubernetes says of it.
func podReason(p corev1.Pod) (reason, message string) {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return w.Reason, w.Message
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			if t.Reason == "" || t.Reason == "Error" {
				return fmt.Sprintf("exit %d", t.ExitCode), ""
			}
			return fmt.Sprintf("%s, exit %d", t.Reason, t.ExitCode), ""
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return c.Reason, c.Message // Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.
		}
	}
	return p.Status.Reason, p.Status.Message
}
