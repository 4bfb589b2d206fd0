//go:build linux

package k8scluster

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// KubeStateMetricsVersion is the kube-state-metrics that
// StartKubeStateMetrics runs, built by scripts/ksm-build.sh.
const KubeStateMetricsVersion = "v2.15.0"

// KubeStateMetricsBinary is where scripts/ksm-build.sh puts
// kube-state-metrics: $PERFLAB_KSM_BIN, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/perflab/k8s/kube-state-metrics/v2.15.0/kube-state-metrics.
func KubeStateMetricsBinary() string {
	if p := os.Getenv("PERFLAB_KSM_BIN"); p != "" {
		return p
	}
	return filepath.Join(cacheRoot(), "kube-state-metrics", KubeStateMetricsVersion, "kube-state-metrics")
}

// StartKubeStateMetrics runs kube-state-metrics as one of the cluster's
// processes (Stop ends it with the others), watching pods with the admin's
// kubeconfig and serving on loopback, and returns the host:port of its
// /metrics once it is ready. Without the binary the test is skipped (or
// fails, see testutil.Unavailable).
func (c *Cluster) StartKubeStateMetrics(t testing.TB) string {
	t.Helper()
	bin := KubeStateMetricsBinary()
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		testutil.Unavailable(t, "kube-state-metrics %s is not built: %s is missing (run scripts/ksm-build.sh once, ~4 min, or make test-k8s)",
			KubeStateMetricsVersion, bin)
	}
	port, telemetry := testutil.FreePort(t), testutil.FreePort(t)
	if err := c.run("kube-state-metrics", bin, "--kubeconfig="+c.Kubeconfig, "--resources=pods",
		"--host=127.0.0.1", "--port="+strconv.Itoa(port),
		"--telemetry-host=127.0.0.1", "--telemetry-port="+strconv.Itoa(telemetry)); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.waitFor(ctx, "kube-state-metrics", func(ctx context.Context) error {
		return httpOK(ctx, "http://127.0.0.1:"+strconv.Itoa(telemetry)+"/readyz", "") // its metrics of pods are ready
	}); err != nil {
		t.Fatal(err)
	}
	return addr
}
