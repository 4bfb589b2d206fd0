//go:build linux

// Package k8scluster starts a real single-node Kubernetes on loopback for
// tests, and stops it leaving the host as it found it. Linux only (a
// kubelet, mounts, flock; every file says //go:build linux).
//
// Start runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// containerd and the kubelet (Kubernetes v1.34.4, built once by
// scripts/k8s-build.sh; Debian's containerd, runc, CNI plugins and etcd),
// each in its own session with its files in a private directory, waits
// until the node is Ready and the default service account exists, and
// returns the admin kubeconfig, a clientset and a way to import OCI image
// archives into the node's containerd (pods use hostNetwork and
// imagePullPolicy: Never: there is no registry and no pod network).
//
// The kubelet changes the host: kernel sysctls, directories such as
// /var/lib/kubelet/device-plugins and /var/log/containers, the kubepods
// cgroups, mounts. Start notes how the host was before; Stop (also run by
// t.Cleanup, and on SIGINT or SIGTERM of the test) ends every process of
// the cluster by PID and puts each of those back. Should the test process
// die before that, the next Start puts the host back first. One cluster
// runs at a time on a host: Start waits for another to stop.
//
// Without root or the binaries the test is skipped with the reason, or
// fails under PERFLAB_REQUIRE_SERVERS=1 (see testutil.Unavailable).
package k8scluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/perflab/perflab/internal/testutil"
)

// Version is the Kubernetes release the cluster runs.
const Version = "v1.34.4"

// Bounds of every wait: a test fails, it never hangs.
const (
	startTimeout  = 3 * time.Minute // from nothing to node Ready
	lockTimeout   = 10 * time.Minute
	stopGrace     = 10 * time.Second // SIGTERM to SIGKILL
	importTimeout = 2 * time.Minute
)

// Cluster is a running single-node Kubernetes.
type Cluster struct {
	Kubeconfig string                // the admin's kubeconfig (system:masters)
	Client     *kubernetes.Clientset // the admin's clientset
	Config     *rest.Config          // the admin's client configuration
	Node       string                // the node's name (the host name)
	Dir        string                // the cluster's files, removed by Stop
	Started    time.Duration         // how long Start took

	lay       layout
	ports     ports
	comps     []*component // in start order
	bins      binaries
	state     *hostState
	statePath string
	lock      *os.File
	stopOnce  sync.Once
	stopErr   error
	stopped   time.Duration
	steps     []string // how long each step of Start took
	stepStart time.Time
	quit      chan struct{}
}

// binaries are the programs the cluster runs.
type binaries struct {
	k8s                                      string // directory of the Kubernetes binaries
	etcd, containerd, shim, runc, ctr, gocmd string
}

// Start brings up a cluster, registers its Stop with t.Cleanup and
// returns it once the node is Ready and the default service account
// exists. It skips the test (or fails it, see testutil.Unavailable) when
// not run as root or when a program is missing.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bins := requirements(t)
	begin := time.Now()
	c := &Cluster{bins: bins, quit: make(chan struct{})}
	if err := c.takeHost(t); err != nil {
		t.Fatalf("cannot start Kubernetes: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.logTails(t)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("cannot stop Kubernetes cleanly: %v", err)
		}
		for _, p := range c.comps {
			if p.killed {
				t.Logf("%s ignored SIGTERM for %v and was killed", p.name, stopGrace)
			}
		}
	})
	c.watchSignals()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		t.Fatalf("cannot start Kubernetes %s: %v", Version, err)
	}
	c.Started = time.Since(begin)
	t.Logf("Kubernetes %s up in %v (%s; node %s, API server %s, files in %s)", Version, c.Started.Round(time.Millisecond),
		strings.Join(c.steps, ", "), c.Node, c.Config.Host, c.Dir)
	return c
}

// requirements finds the programs, or skips (fails) the test.
func requirements(t testing.TB) binaries {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Unavailable(t, "a real Kubernetes node needs root (the kubelet and containerd manage cgroups and mounts)")
	}
	b := binaries{k8s: BinDir()}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"} {
		if fi, err := os.Stat(filepath.Join(b.k8s, name)); err != nil || fi.Mode()&0o111 == 0 {
			testutil.Unavailable(t, "Kubernetes %s is not built: %s is missing (run scripts/k8s-build.sh once, ~10 min, or make test-k8s)", Version, filepath.Join(b.k8s, name))
		}
	}
	b.etcd = testutil.RequireBinary(t, "etcd")
	b.containerd = testutil.RequireBinary(t, "containerd")
	b.shim = testutil.RequireBinary(t, "containerd-shim-runc-v2")
	b.runc = testutil.RequireBinary(t, "runc")
	b.ctr = testutil.RequireBinary(t, "ctr")
	b.gocmd = testutil.RequireBinary(t, "go")
	if _, err := os.Stat(filepath.Join(cniBinDir, "loopback")); err != nil {
		testutil.Unavailable(t, "the CNI loopback plugin is not installed (apt-get install containernetworking-plugins)")
	}
	return b
}

// BinDir is where scripts/k8s-build.sh puts the Kubernetes binaries:
// $PERFLAB_K8S_BIN, else ${XDG_CACHE_HOME:-$HOME/.cache}/perflab/k8s/v1.34.4/bin.
func BinDir() string {
	if d := os.Getenv("PERFLAB_K8S_BIN"); d != "" {
		return d
	}
	return filepath.Join(cacheRoot(), Version, "bin")
}

// cacheRoot is ${XDG_CACHE_HOME:-$HOME/.cache}/perflab/k8s.
func cacheRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "perflab", "k8s")
}

// Kubectl returns the kubectl built with the cluster.
func (c *Cluster) Kubectl() string { return filepath.Join(c.bins.k8s, "kubectl") }

// ImportImage imports an OCI image layout (or Docker) archive into the
// node's containerd, where pods with imagePullPolicy: Never find it.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bins.ctr, "--address", c.lay.containerdSocket(), "--namespace", "k8s.io",
		"images", "import", archive)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot import image %s: %w: %s", archive, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// PIDs returns the process id of each component, by name (etcd,
// kube-apiserver, containerd, kube-controller-manager, kube-scheduler,
// kubelet).
func (c *Cluster) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range c.comps {
		out[p.name] = p.cmd.Process.Pid
	}
	return out
}

// Stopped returns how long Stop took, once it has run.
func (c *Cluster) Stopped() time.Duration { return c.stopped }

// step notes that a step of Start has ended, and how long it took.
func (c *Cluster) step(name string) {
	now := time.Now()
	c.steps = append(c.steps, fmt.Sprintf("%s %v", name, now.Sub(c.stepStart).Round(10*time.Millisecond)))
	c.stepStart = now
}

// logTails logs the end of each component's log, for a failed test.
func (c *Cluster) logTails(t testing.TB) {
	t.Helper()
	for _, p := range c.comps {
		t.Logf("--- %s (%s), last lines:\n%s", p.name, p.log, p.tail())
	}
}
