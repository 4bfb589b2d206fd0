//go:build linux

package k8scluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// start brings the components up one after the other, each once the one
// it needs answers.
func (c *Cluster) start(ctx context.Context) error {
	c.stepStart = time.Now()
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("cannot read the host name: %w", err)
	}
	c.Node = strings.ToLower(host)
	if c.ports, err = freePorts(); err != nil {
		return err
	}
	certs, err := c.writeFiles()
	if err != nil {
		return err
	}
	c.step("files")
	pause, err := c.pauseImage(ctx)
	if err != nil {
		return err
	}
	c.step("pause image")
	if err := c.startControlPlane(ctx, certs); err != nil {
		return err
	}
	if err := c.startNode(ctx, pause); err != nil {
		return err
	}
	return c.waitNode(ctx)
}

// freePorts picks the cluster's loopback ports.
func freePorts() (ports, error) {
	var ps [5]int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := range ps {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, fmt.Errorf("cannot find a free port on 127.0.0.1: %w", err)
		}
		ls = append(ls, l)
		ps[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports{etcd: ps[0], etcdPeer: ps[1], apiserver: ps[2], kubelet: ps[3], kubeletHealthz: ps[4]}, nil
}

// writeFiles writes the certificates, kubeconfigs and configurations.
func (c *Cluster) writeFiles() (map[string]*keyPair, error) {
	l := c.lay
	if err := l.mkdirs(); err != nil {
		return nil, err
	}
	certs, err := c.writeCerts()
	if err != nil {
		return nil, err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(c.ports.apiserver)
	c.Kubeconfig = filepath.Join(l.pki, "admin.kubeconfig")
	for file, who := range map[string]string{
		"admin": "admin", "controller-manager": "controller-manager", "scheduler": "scheduler", "kubelet": "kubelet",
	} {
		if err := writeKubeconfig(filepath.Join(l.pki, file+".kubeconfig"), server, certs["ca"], certs[who]); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		filepath.Join(l.containerd, "config.toml"):   l.containerdConfig(),
		filepath.Join(l.cni, "10-loopback.conflist"): cniConfig,
		filepath.Join(l.kubelet, "config.yaml"):      l.kubeletConfig(c.ports, certs["ca"], certs["kubelet-serving"]),
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
	}
	c.Config = &rest.Config{
		Host:            server,
		TLSClientConfig: rest.TLSClientConfig{CAData: certs["ca"].certPEM, CertData: certs["admin"].certPEM, KeyData: certs["admin"].keyPEM},
		QPS:             50, Burst: 100, Timeout: 30 * time.Second,
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, fmt.Errorf("cannot make the admin client: %w", err)
	}
	return certs, nil
}

// writeCerts makes the CA and every certificate the cluster needs.
func (c *Cluster) writeCerts() (map[string]*keyPair, error) {
	ca, err := newCA(c.lay.pki)
	if err != nil {
		return nil, err
	}
	loop := []net.IP{net.IPv4(127, 0, 0, 1)}
	specs := []certSpec{
		{name: "apiserver", cn: "kube-apiserver", server: true, ips: append(loop, net.IPv4(127, 80, 0, 1)),
			dns: []string{c.Node, "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{name: "kubelet-serving", cn: c.Node, server: true, ips: loop, dns: []string{c.Node, "localhost"}},
		{name: "admin", cn: "perflab-admin", orgs: []string{"system:masters"}},
		{name: "apiserver-kubelet", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
		{name: "controller-manager", cn: "system:kube-controller-manager"},
		{name: "scheduler", cn: "system:kube-scheduler"},
		{name: "kubelet", cn: "system:node:" + c.Node, orgs: []string{"system:nodes"}},
	}
	certs := map[string]*keyPair{"ca": ca}
	for _, s := range specs {
		if certs[s.name], err = ca.issue(c.lay.pki, s); err != nil {
			return nil, err
		}
	}
	return certs, nil
}

// pauseImage builds the pause program and writes its image archive.
func (c *Cluster) pauseImage(ctx context.Context) (string, error) {
	dir := filepath.Join(c.Dir, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s: %w", dir, err)
	}
	bin, err := BuildStatic(ctx, "github.com/perflab/perflab/internal/testutil/k8scluster/pause", dir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "pause.tar")
	return out, WriteImage(out, PauseImage, bin)
}

// startControlPlane starts etcd and the API server, waits for them, then
// starts the controller manager and the scheduler.
func (c *Cluster) startControlPlane(ctx context.Context, certs map[string]*keyPair) error {
	saKey, saPub, err := serviceAccountKeys(c.lay.pki)
	if err != nil {
		return err
	}
	if err := c.run("etcd", c.bins.etcd, c.lay.etcdArgs(c.ports)...); err != nil {
		return err
	}
	health := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcd) + "/health"
	if err := c.waitFor(ctx, "etcd", func(ctx context.Context) error { return httpOK(ctx, health, `"health":"true"`) }); err != nil {
		return err
	}
	c.step("etcd")
	if err := c.run("kube-apiserver", c.k8s("kube-apiserver"), c.lay.apiserverArgs(c.ports, certs, saKey, saPub)...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "the API server", func(ctx context.Context) error {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return err
	}
	c.step("API server")
	if err := c.run("kube-controller-manager", c.k8s("kube-controller-manager"), c.lay.controllerManagerArgs(certs, saKey)...); err != nil {
		return err
	}
	return c.run("kube-scheduler", c.k8s("kube-scheduler"), c.lay.schedulerArgs()...)
}

// startNode starts containerd, imports the pause image, then starts the
// kubelet.
func (c *Cluster) startNode(ctx context.Context, pause string) error {
	if err := c.run("containerd", c.bins.containerd, c.lay.containerdArgs()...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd", func(ctx context.Context) error { return c.ImportImage(ctx, pause) }); err != nil {
		return err
	}
	c.step("containerd")
	return c.run("kubelet", c.k8s("kubelet"), c.lay.kubeletArgs(c.Node)...)
}

// waitNode waits until the node is Ready and the default namespace has
// its service account and the root CA pods with a token mount.
func (c *Cluster) waitNode(ctx context.Context) error {
	if err := c.waitFor(ctx, "node "+c.Node+" Ready", func(ctx context.Context) error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node not Ready: %v", node.Status.Conditions)
	}); err != nil {
		return err
	}
	c.step("node Ready")
	if err := c.waitFor(ctx, "the default service account", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	err := c.waitFor(ctx, "the kube-root-ca.crt config map", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
	c.step("default service account")
	return err
}

// run starts a component and keeps it for Stop.
func (c *Cluster) run(name, bin string, args ...string) error {
	p, err := startComponent(name, c.lay.logs, bin, args...)
	if err != nil {
		return err
	}
	c.comps = append(c.comps, p)
	return nil
}

func (c *Cluster) k8s(name string) string { return filepath.Join(c.bins.k8s, name) }

// httpOK GETs url and checks the answer is 200 and contains want.
func httpOK(ctx context.Context, url, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body)
	}
	return nil
}
