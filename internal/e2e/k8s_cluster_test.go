//go:build k8s && linux

// The tests on a real single-node Kubernetes (internal/testutil/k8scluster):
// run by `make test-k8s` (go test -tags k8s -run '^TestK8s'), not by
// `make test`.

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/testutil"
	"github.com/perflab/perflab/internal/testutil/k8scluster"
)

// k8sImage is the tests' perflab image, as a pod names it: the archive's
// tag, imported into the node's containerd (never pulled).
const k8sImage = "perflab:e2e"

// Bounds of the tests on the cluster: a test fails, it never hangs.
const (
	k8sRunTimeout = 3 * time.Minute // one perflab k8s run
	k8sGoneWithin = time.Minute     // a run's objects gone once perflab ended
	k8sPoll       = 250 * time.Millisecond
)

// cluster is the cluster the tests of TestK8s share, with perflab's image
// on its node.
type cluster struct {
	*k8scluster.Cluster
}

// TestK8s starts one cluster, builds perflab's image as a user does
// (perflab k8s image --out, of a static build) and imports it into the
// node, then runs each test of perflab on it in turn.
func TestK8s(t *testing.T) {
	c := &cluster{k8scluster.Start(t)}
	begin := time.Now()
	c.importPerflab(t)
	t.Logf("perflab's image built and imported in %v", time.Since(begin).Round(time.Millisecond))
	for _, st := range []struct {
		name string
		test func(*testing.T, *cluster)
	}{
		{"RunMatchesOneProcess", testK8sRunMatchesOneProcess},
		{"ImageNotOnNode", testK8sImageNotOnNode},
		{"WorkerOOMKilled", testK8sWorkerOOMKilled},
		{"WorkerPodDeleted", testK8sWorkerPodDeleted},
		{"JobDeadline", testK8sJobDeadline},
		{"Interrupted", testK8sInterrupted},
		{"ManifestsAccepted", testK8sManifestsAccepted},
		{"ClientBound", testK8sClientBound},
		{"SizeVerify", testK8sSizeVerify},
	} {
		t.Run(st.name, func(t *testing.T) { st.test(t, c) })
	}
}

// importPerflab writes perflab's image with perflab k8s image --out (of a
// static build: the image holds the binary alone) and imports it.
func (c *cluster) importPerflab(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	archive := filepath.Join(dir, "perflab.tar")
	if code, _, stderr := runStatic(t, dir, "k8s", "image", "--out", archive, "--tag", k8sImage); code != 0 {
		t.Fatalf("perflab k8s image: exit %d\n%s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
}

// k8sCmd is `perflab k8s SUB PLAN` with the cluster's kubeconfig, the
// tests' image (never pulled) and args, killed after k8sRunTimeout.
func (c *cluster) k8sCmd(t *testing.T, sub, plan string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), k8sRunTimeout)
	t.Cleanup(cancel)
	all := append([]string{"k8s", sub, plan, "--image", k8sImage, "--pull-policy", "Never"}, args...)
	if sub == "run" {
		all = append(all, "--kubeconfig", c.Kubeconfig)
	}
	return exec.CommandContext(ctx, perflab, all...)
}

// localCluster is the flags of a run on the local cluster: the pods on
// the node's network, the store a directory of the node (returned too).
func localCluster(t *testing.T) (flags []string, store string) {
	store = filepath.Join(t.TempDir(), "store")
	return []string{"--host-network", "--store-hostpath", store}, store
}

// waitPart waits until worker i has delivered its first interval of the
// first phase to the store directory.
func waitPart(t *testing.T, store string, i int) {
	t.Helper()
	deadline := time.Now().Add(k8sRunTimeout)
	for time.Now().Before(deadline) {
		if part, _ := filepath.Glob(filepath.Join(store, "*", "phases", "0", fmt.Sprintf("shard-%d", i), "part-000000.json")); len(part) == 1 {
			return
		}
		time.Sleep(k8sPoll)
	}
	t.Fatalf("worker %d never delivered an interval to %s", i, store)
}

// deployTarget runs `perflab target http --addr 127.0.0.1:PORT` with args
// in the cluster, a Deployment of perflab's image on the node's network,
// and returns its URL once it answers; it is deleted when the test ends.
func (c *cluster) deployTarget(t *testing.T, args ...string) string {
	t.Helper()
	port := testutil.FreePort(t)
	name := "target-" + strconv.Itoa(port)
	labels := map[string]string{"app": name}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			// on the node's network, the new pod can bind the port only once the old one is gone
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{
					Name: "target", Image: k8sImage, ImagePullPolicy: corev1.PullNever,
					Args: append([]string{"target", "http", "--addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...),
				}}},
			},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create the target's Deployment: %v", err)
	}
	t.Cleanup(func() { c.deleteDeployment(t, name) })
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return url
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the target's pod never answered at %s: %s", url, c.podStates(labels))
		case <-time.After(k8sPoll):
		}
	}
}

func (c *cluster) deleteDeployment(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), k8sGoneWithin)
	defer cancel()
	fg := metav1.DeletePropagationForeground
	if err := c.Client.AppsV1().Deployments("default").Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Errorf("cannot delete the target's Deployment: %v", err)
	}
	c.waitGone(t, map[string]string{"app": name})
}

// podStates says the state of each pod labelled so, for a failure.
func (c *cluster) podStates(labels map[string]string) string {
	return k8scluster.PodStates(context.Background(), c.Client, selector(labels))
}

func selector(labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// runLabels select the objects of perflab's run id.
func runLabels(id string) map[string]string { return map[string]string{k8s.LabelRunID: id} }

// waitGone waits until no pod, Job, ConfigMap or ServiceAccount labelled
// so is left, and fails the test naming what is after k8sGoneWithin.
func (c *cluster) waitGone(t *testing.T, labels map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k8sGoneWithin)
	defer cancel()
	opts := metav1.ListOptions{LabelSelector: selector(labels)}
	var left []string
	for {
		left = left[:0]
		pods, err1 := c.Client.CoreV1().Pods("default").List(ctx, opts)
		jobs, err2 := c.Client.BatchV1().Jobs("default").List(ctx, opts)
		cms, err3 := c.Client.CoreV1().ConfigMaps("default").List(ctx, opts)
		sas, err4 := c.Client.CoreV1().ServiceAccounts("default").List(ctx, opts)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			t.Fatalf("cannot list what is left of %v: %v", labels, err)
		}
		for _, p := range pods.Items {
			left = append(left, "pod "+p.Name)
		}
		for _, j := range jobs.Items {
			left = append(left, "Job "+j.Name)
		}
		for _, cm := range cms.Items {
			left = append(left, "ConfigMap "+cm.Name)
		}
		for _, sa := range sas.Items {
			left = append(left, "ServiceAccount "+sa.Name)
		}
		if len(left) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("left in the cluster %v after perflab ended: %s", k8sGoneWithin, strings.Join(left, ", "))
			return
		case <-time.After(k8sPoll):
		}
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// podWatch records the pods of a run, by their completion index, as they
// come and go.
type podWatch struct {
	mu      sync.Mutex
	byIndex map[int][]string // pod names, first seen first
	stop    chan struct{}
	done    chan struct{}
}

// watchPods records the pods of run id until the returned watch's end.
func (c *cluster) watchPods(id string) *podWatch {
	w := &podWatch{byIndex: map[int][]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	opts := metav1.ListOptions{LabelSelector: selector(runLabels(id))}
	go func() {
		defer close(w.done)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			pods, err := c.Client.CoreV1().Pods("default").List(ctx, opts)
			cancel()
			if err == nil {
				w.add(pods.Items)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(k8sPoll):
			}
		}
	}()
	return w
}

func (w *podWatch) add(pods []corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pods {
		i, err := strconv.Atoi(p.Annotations["batch.kubernetes.io/job-completion-index"])
		if err != nil {
			continue
		}
		known := false
		for _, n := range w.byIndex[i] {
			known = known || n == p.Name
		}
		if !known {
			w.byIndex[i] = append(w.byIndex[i], p.Name)
		}
	}
}

// end stops watching and returns the pods seen, by index.
func (w *podWatch) end() map[int][]string {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byIndex
}

// pod waits until the watch has seen worker i's pod, and returns its name.
func (w *podWatch) pod(t *testing.T, i int) string {
	t.Helper()
	deadline := time.Now().Add(k8sRunTimeout)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		names := w.byIndex[i]
		w.mu.Unlock()
		if len(names) > 0 {
			return names[0]
		}
		time.Sleep(k8sPoll)
	}
	t.Fatalf("worker %d's pod never came", i)
	return ""
}

// said is what perflab told the user on stderr, without its progress
// lines, for the test's log.
func said(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "p/") {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n")
}
