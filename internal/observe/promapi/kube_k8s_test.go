//go:build k8s

// What the kubernetes preset's real-cluster tests need: perflab's image
// in the node, pods, the host PID of a container, and a Prometheus that
// scrapes the kubelet as a user's would.

package promapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/testutil/k8scluster"
)

// kube is a started cluster and the namespace the test's pods run in.
type kube struct {
	c  *k8scluster.Cluster
	ns string
}

func startKube(ctx context.Context, t *testing.T, ns string) *kube {
	t.Helper()
	c := k8scluster.Start(t)
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create namespace %s: %v", ns, err)
	}
	return &kube{c: c, ns: ns}
}

// perflabImage builds a static perflab, writes its image with `perflab k8s
// image`'s code and imports it into the node; it returns the pod's image.
func (k *kube) perflabImage(ctx context.Context, t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin, err := k8scluster.BuildStatic(ctx, "github.com/perflab/perflab/cmd/perflab", dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := k8s.BuildImage(k8s.ImageOptions{Binary: bin, Arch: runtime.GOARCH, Version: "promapi-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	tag, err := k8s.ParseImageRef("perflab.local/perflab:promapi-test", "")
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "perflab.tar")
	if err := k8s.WriteArchive(archive, img, tag); err != nil {
		t.Fatal(err)
	}
	return k.importImage(ctx, t, archive, k8s.ImageName(tag))
}

// staticImage builds the Go main package pkg as an image named ref, with
// k8scluster's own image writer, and imports it.
func (k *kube) staticImage(ctx context.Context, t *testing.T, pkg, ref string) string {
	t.Helper()
	dir := t.TempDir()
	bin, err := k8scluster.BuildStatic(ctx, pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := k8scluster.WriteImage(archive, ref, bin); err != nil {
		t.Fatal(err)
	}
	return k.importImage(ctx, t, archive, ref)
}

func (k *kube) importImage(ctx context.Context, t *testing.T, archive, image string) string {
	t.Helper()
	if err := k.c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	return image
}

// podSpec is a pod of one container on the host's network, its image
// never pulled, its requests equal to its limits (Guaranteed QoS).
func (k *kube) podSpec(name, image string, restart corev1.RestartPolicy, cpu, memory string, args ...string) *corev1.Pod {
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
		Spec: corev1.PodSpec{
			HostNetwork: true, RestartPolicy: restart, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name: name, Image: image, ImagePullPolicy: corev1.PullNever, Args: args,
				Resources: corev1.ResourceRequirements{Requests: limits, Limits: limits},
			}},
		},
	}
}

// createPod creates pod and waits until ready(pod) holds.
func (k *kube) createPod(ctx context.Context, t *testing.T, pod *corev1.Pod, what string, ready func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	pods := k.c.Client.CoreV1().Pods(k.ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create pod %s: %v", pod.Name, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("cannot read pod %s: %v", pod.Name, err)
		}
		if ready(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: not %s in 2 minutes: %s", pod.Name, what, podState(p))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func running(p *corev1.Pod) bool {
	return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
}

func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	for _, st := range p.Status.ContainerStatuses {
		s += fmt.Sprintf(" %s restarts %d", st.Name, st.RestartCount)
		if w := st.State.Waiting; w != nil {
			s += " waiting " + w.Reason + ": " + w.Message
		}
		if x := st.LastTerminationState.Terminated; x != nil {
			s += fmt.Sprintf(" last exit %d %s", x.ExitCode, x.Reason)
		}
	}
	return s
}

// hostPID finds the host PID of a container's first process: the process
// whose /proc/PID/cgroup names the container's ID (containerd://ID) and
// whose parent does not.
func hostPID(t *testing.T, containerID string) int {
	t.Helper()
	_, id, _ := strings.Cut(containerID, "://")
	in := func(pid string) bool {
		b, err := os.ReadFile("/proc/" + pid + "/cgroup")
		return err == nil && strings.Contains(string(b), id)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || !in(e.Name()) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: the comm may hold spaces, the ppid follows the last ')'
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && !in(fields[1]) {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	t.Fatalf("no process of container %s on the host", id)
	return 0
}

// kubeletScrape is the Prometheus configuration that scrapes the kubelet's
// /metrics/cadvisor and /metrics/resource as a user's Prometheus does: a
// ServiceAccount token whose ClusterRole may get nodes/metrics, the
// kubelet's serving certificate checked against the cluster's CA. extra
// are more jobs, already written.
func (k *kube) kubeletScrape(ctx context.Context, t *testing.T, interval time.Duration, extra string) string {
	t.Helper()
	dir := t.TempDir()
	token, ca := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(token, []byte(k.metricsToken(ctx, t)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, k.c.Config.TLSClientConfig.CAData, 0o644); err != nil {
		t.Fatal(err)
	}
	node, err := k.c.Client.CoreV1().Nodes().Get(ctx, k.c.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := fmt.Sprintf("127.0.0.1:%d", node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %v\n  scrape_timeout: %v\nscrape_configs:\n", interval, interval)
	for _, path := range []string{"cadvisor", "resource"} {
		fmt.Fprintf(&b, `  - job_name: kubelet-%s
    scheme: https
    metrics_path: /metrics/%s
    authorization: {credentials_file: %q}
    tls_config: {ca_file: %q}
    static_configs: [{targets: [%q]}]
`, path, path, token, ca, kubelet)
	}
	b.WriteString(extra)
	return b.String()
}

// metricsToken makes a ServiceAccount allowed to get nodes/metrics (what
// the kubelet asks the API server before it serves /metrics/*) and
// returns a token of it.
func (k *kube) metricsToken(ctx context.Context, t *testing.T) string {
	t.Helper()
	cs := k.c.Client
	const name = "perflab-prometheus"
	_, err := cs.CoreV1().ServiceAccounts(k.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err == nil {
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{})
	}
	if err == nil {
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: k.ns}},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("cannot give Prometheus a ServiceAccount that may read the kubelet's metrics: %v", err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(k.ns).CreateToken(ctx, name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot get a token of ServiceAccount %s: %v", name, err)
	}
	return tr.Status.Token
}
