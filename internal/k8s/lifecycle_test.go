package k8s

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/perflab/perflab/internal/k8s/k8stest"
)

func built(t *testing.T) Objects {
	t.Helper()
	objs, err := Build(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// exists says whether the fake cluster holds each of the run's objects.
func exists(t *testing.T, c *fake.Clientset, objs Objects) (cm, sa, job bool) {
	t.Helper()
	ctx, ns := context.Background(), objs.Job.Namespace
	_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, objs.ConfigMap.Name, metav1.GetOptions{})
	cm = err == nil
	_, err = c.CoreV1().ServiceAccounts(ns).Get(ctx, objs.Job.Name, metav1.GetOptions{})
	sa = err == nil
	_, err = c.BatchV1().Jobs(ns).Get(ctx, objs.Job.Name, metav1.GetOptions{})
	job = err == nil
	return cm, sa, job
}

func TestCreateThenDelete(t *testing.T) {
	c, objs := fake.NewClientset(), built(t)
	if err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	if cm, sa, job := exists(t, c, objs); !cm || !sa || !job {
		t.Fatalf("after Create: configmap %v, serviceaccount %v, job %v", cm, sa, job)
	}
	if err := Delete(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	if cm, sa, job := exists(t, c, objs); cm || sa || job {
		t.Errorf("after Delete: configmap %v, serviceaccount %v, job %v", cm, sa, job)
	}
	if err := Delete(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
}

func TestCreateOfAnExistingRunCreatesNothing(t *testing.T) {
	objs := built(t)
	c := fake.NewClientset(objs.Job.DeepCopy()) // a Job of that name is there already
	err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs)
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("err = %v", err)
	}
	if cm, sa, _ := exists(t, c, objs); cm || sa {
		t.Errorf("left behind after a failed Create: configmap %v, serviceaccount %v", cm, sa)
	}
}

func TestDeleteAfterACancelledRun(t *testing.T) {
	c, objs := fake.NewClientset(), built(t)
	if err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The caller cleans up with a context of its own.
	if err := Delete(context.WithoutCancel(ctx), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	if cm, sa, job := exists(t, c, objs); cm || sa || job {
		t.Errorf("left behind: configmap %v, serviceaccount %v, job %v", cm, sa, job)
	}
}

func TestDeleteReportsWhatItCouldNotDelete(t *testing.T) {
	c, objs := fake.NewClientset(), built(t)
	if err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	c.PrependReactor("delete", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(batchv1.Resource("jobs"), objs.Job.Name, fmt.Errorf("no RBAC"))
	})
	err := Delete(context.Background(), k8stest.Clientset{Interface: c}, objs)
	if err == nil || !strings.Contains(err.Error(), "cannot delete Job") {
		t.Fatalf("err = %v", err)
	}
	if cm, sa, _ := exists(t, c, objs); cm || sa {
		t.Errorf("a failed Job delete must not stop the others: configmap %v, serviceaccount %v", cm, sa)
	}
}

// pod is worker i's pod in phase, with its container in state.
func pod(objs Objects, i int, phase corev1.PodPhase, state corev1.ContainerState) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d-x", objs.Job.Name, i), Namespace: objs.Job.Namespace,
			Labels:            objs.Job.Spec.Template.Labels,
			Annotations:       map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)},
			CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)),
		},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "perflab", State: state}}},
	}
}

var (
	running = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	ok      = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
)

// cluster plays a Job through steps: every read of the Job moves it one
// step on, so each Look sees one step, without timing.
func cluster(t *testing.T, objs Objects, steps ...func(c *fake.Clientset)) *fake.Clientset {
	t.Helper()
	c := fake.NewClientset()
	if err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs); err != nil {
		t.Fatal(err)
	}
	n := 0
	c.PrependReactor("get", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		if n < len(steps) {
			steps[n](c)
			n++
		}
		return false, nil, nil
	})
	return c
}

func setPods(pods ...*corev1.Pod) func(c *fake.Clientset) {
	return func(c *fake.Clientset) {
		tr := c.Tracker()
		for _, p := range pods {
			if err := tr.Update(corev1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace); err != nil {
				_ = tr.Add(p)
			}
		}
	}
}

func setJobCondition(objs Objects, cond batchv1.JobConditionType, reason string) func(c *fake.Clientset) {
	return func(c *fake.Clientset) {
		j := objs.Job.DeepCopy()
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: reason, Message: reason + " happened"}}
		_ = c.Tracker().Update(batchv1.SchemeGroupVersion.WithResource("jobs"), j, j.Namespace)
	}
}

// looks is n looks at the Job, one a step of the cluster's.
func looks(t *testing.T, c *fake.Clientset, objs Objects, n int) []Status {
	t.Helper()
	var sts []Status
	for range n {
		st, err := Look(context.Background(), k8stest.Clientset{Interface: c}, objs.Job)
		if err != nil {
			t.Fatal(err)
		}
		sts = append(sts, st)
	}
	return sts
}

// worker is the state of worker i in st.
func worker(t *testing.T, st Status, i int) WorkerState {
	t.Helper()
	if i >= len(st.Workers) {
		t.Fatalf("no worker %d in %+v", i, st)
	}
	return st.Workers[i]
}

func TestLookFollowsTheWorkersToCompletion(t *testing.T) {
	objs := built(t)
	var all []*corev1.Pod
	for i := range 4 {
		all = append(all, pod(objs, i, corev1.PodSucceeded, ok))
	}
	c := cluster(t, objs,
		setPods(pod(objs, 0, corev1.PodPending, corev1.ContainerState{}), pod(objs, 1, corev1.PodRunning, running)),
		setPods(all...),
		setJobCondition(objs, batchv1.JobComplete, "Completed"),
	)
	sts := looks(t, c, objs, 3)
	var seen []string
	for _, st := range sts {
		for _, w := range st.Workers {
			seen = append(seen, w.String())
		}
	}
	text := strings.Join(seen, "\n")
	for _, want := range []string{"worker 0: Pending", "worker 1: Running", "worker 3: not created", "worker 2: Succeeded"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q among the looks:\n%s", want, text)
		}
	}
	if st := sts[1]; st.Done || st.Failed || st.Finished != 4 {
		t.Errorf("every pod succeeded, the Job not yet complete: %+v", st)
	}
	if st := sts[2]; !st.Done || st.Failed || st.Finished != 4 {
		t.Errorf("the Job complete: %+v", st)
	}
}

func TestLookNamesTheFailedWorker(t *testing.T) {
	objs := built(t)
	oom := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
	c := cluster(t, objs,
		setPods(pod(objs, 0, corev1.PodRunning, running), pod(objs, 2, corev1.PodRunning, running)),
		setPods(pod(objs, 2, corev1.PodFailed, oom)),
	)
	sts := looks(t, c, objs, 2)
	if sts[0].Failed {
		t.Errorf("two workers running, none failed: %+v", sts[0])
	}
	st := sts[1]
	w := worker(t, st, 2)
	if !st.Failed || st.Done || st.Finished != 1 || !w.Failed() {
		t.Errorf("a worker was OOMKilled and Look said %+v", st)
	}
	if got, want := w.String(), "worker 2: Failed (OOMKilled, exit 137)"; got != want {
		t.Errorf("worker 2 = %q, want %q", got, want)
	}
}

func TestLookGivesUpOnAnImageThatCannotBePulled(t *testing.T) {
	objs := built(t)
	pull := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	c := cluster(t, objs, setPods(pod(objs, 1, corev1.PodPending, pull)))
	st := looks(t, c, objs, 1)[0]
	w := worker(t, st, 1)
	if !st.Failed || !w.Failed() || w.String() != "worker 1: Pending (ImagePullBackOff)" {
		t.Errorf("an image that cannot be pulled: %+v", st)
	}
}

func TestLookReportsTheJobsOwnFailure(t *testing.T) {
	objs := built(t)
	c := cluster(t, objs, setJobCondition(objs, batchv1.JobFailed, "DeadlineExceeded"))
	st := looks(t, c, objs, 1)[0]
	if !st.Failed || st.Done || !strings.Contains(st.Message, "DeadlineExceeded") {
		t.Errorf("the Job failed: %+v", st)
	}
}

// TestCreateRefusesAClusterThatRetriesWorkers: a cluster that drops the
// Job's backoffLimitPerIndex (before 1.29) would retry a failed worker,
// running its share twice: nothing is left of the run, and the error says
// why.
func TestCreateRefusesAClusterThatRetriesWorkers(t *testing.T) {
	c, objs := fake.NewClientset(), built(t)
	c.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		j := a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		j.Spec.BackoffLimitPerIndex = nil
		return true, j, c.Tracker().Create(batchv1.SchemeGroupVersion.WithResource("jobs"), j, j.Namespace)
	})
	err := Create(context.Background(), k8stest.Clientset{Interface: c}, objs)
	if err == nil || !strings.Contains(err.Error(), "backoffLimitPerIndex") {
		t.Fatalf("err = %v", err)
	}
	if cm, sa, job := exists(t, c, objs); cm || sa || job {
		t.Errorf("left behind: configmap %v, serviceaccount %v, job %v", cm, sa, job)
	}
}

func TestLookSaysWhyAWorkerWaits(t *testing.T) {
	objs := built(t)
	never := pod(objs, 0, corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ErrImageNeverPull", Message: `Container image "perflab:absent" is not present with pull policy of Never`}})
	unscheduled := pod(objs, 1, corev1.PodPending, corev1.ContainerState{})
	unscheduled.Status.ContainerStatuses = nil
	unscheduled.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu."}}
	c := cluster(t, objs, setPods(never, unscheduled))
	st, err := Look(context.Background(), k8stest.Clientset{Interface: c}, objs.Job)
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := st.Workers[0], st.Workers[1]
	if !w0.Failed() || w0.Reason != "ErrImageNeverPull" || !strings.Contains(w0.Message, `"perflab:absent"`) {
		t.Errorf("worker 0: %+v, want failed: its image is not on the node", w0)
	}
	if w1.Failed() || w1.Reason != "Unschedulable" || !strings.Contains(w1.Message, "Insufficient cpu") {
		t.Errorf("worker 1: %+v, want waiting, unschedulable", w1)
	}
}
