//go:build k8s && linux

// The real-cluster tests: run by `make test-k8s` (go test -tags k8s), not
// by `make test`.

package k8scluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/perflab/perflab/internal/testutil/k8scluster"
)

const jobImage = "perflab.local/k8scluster-indexjob:1"

// TestClusterRunsIndexedJob starts the cluster, runs an Indexed Job of 3
// pods on an image the test builds and imports, reads each pod's log
// through the API server (which reaches the kubelet), stops the cluster
// and checks the host is as it was: sysctls, directories, cgroups, mounts,
// processes.
func TestClusterRunsIndexedJob(t *testing.T) {
	k8scluster.Recover(t) // a cluster a killed test left, so that "before" is the host's own
	before := readHost(t, "")
	c := k8scluster.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	for _, l := range nonLoopbackListeners(t, c.PIDs()) {
		t.Errorf("not on loopback: %s", l)
	}
	svc, err := c.Client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || !strings.HasPrefix(svc.Spec.ClusterIP, "127.") {
		t.Errorf("the kubernetes service: %v, %v; want a loopback cluster IP", svc, err)
	}

	archive := buildJobImage(ctx, t)
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	job := runIndexedJob(ctx, t, c.Client, 3)
	jobTime := time.Since(begin)
	checkIndexLogs(ctx, t, c.Client, job, 3)
	idle := idleUsage(t, c.PIDs(), 10*time.Second)

	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	after := readHost(t, c.Dir)
	if diff := before.diff(after); len(diff) > 0 {
		t.Errorf("the host is not as it was before the cluster:\n  %s", strings.Join(diff, "\n  "))
	}
	t.Logf("figures: cluster up %v, Indexed Job of 3 done in %v, down %v; idle %s",
		c.Started.Round(time.Millisecond), jobTime.Round(time.Millisecond), c.Stopped().Round(time.Millisecond), idle)
}

// buildJobImage builds testdata/indexjob as a static binary and writes
// its image archive.
func buildJobImage(ctx context.Context, t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin, err := k8scluster.BuildStatic(ctx, "github.com/perflab/perflab/internal/testutil/k8scluster/testdata/indexjob", dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "indexjob.tar")
	if err := k8scluster.WriteImage(out, jobImage, bin); err != nil {
		t.Fatal(err)
	}
	return out
}

// runIndexedJob creates an Indexed Job of n pods (host network, the image
// never pulled) and waits for it to complete.
func runIndexedJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, n int32) *batchv1.Job {
	t.Helper()
	mode := batchv1.IndexedCompletion
	zero, deadline := int32(0), int64(60)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "indexjob", Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: &n, Parallelism: &n, CompletionMode: &mode,
			BackoffLimit: &zero, ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				HostNetwork:   true,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "indexjob", Image: jobImage, ImagePullPolicy: corev1.PullNever,
				}},
			}},
		},
	}
	job, err := cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create the Job: %v", err)
	}
	for {
		job, err = cs.BatchV1().Jobs("default").Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("cannot read the Job: %v", err)
		}
		if job.Status.Succeeded == n {
			return job
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				t.Fatalf("the Job failed: %s: %s; pods: %s; warnings: %s", cond.Reason, cond.Message, k8scluster.PodStates(ctx, cs, "job-name="+job.Name), warnings(ctx, cs))
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Job did not complete in time (%d of %d succeeded); pods: %s; warnings: %s", job.Status.Succeeded, n, k8scluster.PodStates(ctx, cs, "job-name="+job.Name), warnings(ctx, cs))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkIndexLogs reads each pod's log through the API server and checks
// the indexes are 0..n-1, once each.
func checkIndexLogs(ctx context.Context, t *testing.T, cs kubernetes.Interface, job *batchv1.Job, n int) {
	t.Helper()
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job.Name})
	if err != nil {
		t.Fatalf("cannot list the Job's pods: %v", err)
	}
	var got []string
	for _, p := range pods.Items {
		logs, err := cs.CoreV1().Pods("default").GetLogs(p.Name, &corev1.PodLogOptions{}).Do(ctx).Raw()
		if err != nil {
			t.Fatalf("cannot read the log of pod %s: %v: %s", p.Name, err, logs)
		}
		var index string
		if _, err := fmt.Sscanf(string(logs), "indexjob: index %s", &index); err != nil {
			t.Fatalf("pod %s logged %q, want its index", p.Name, logs)
		}
		got = append(got, index)
	}
	slices.Sort(got)
	var want []string
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the pods logged indexes %v, want %v", got, want)
	}
}

// warnings returns the last few distinct Warning events of the default
// namespace (a sandbox or container that cannot start says why there).
func warnings(ctx context.Context, cs kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range events.Items {
		s := e.InvolvedObject.Name + " " + e.Reason + ": " + e.Message
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > 5 {
		out = out[len(out)-5:]
	}
	return strings.Join(out, "; ")
}
