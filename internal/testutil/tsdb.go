package testutil

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartVictoriaMetrics starts a single-node VictoriaMetrics on 127.0.0.1 at
// a free port with its data in a temporary directory, waits until GET
// /health answers OK, and stops it when the test ends. It returns the base
// URL, "http://127.0.0.1:PORT": remote write at /api/v1/write, the
// Prometheus API at /api/v1/query. Samples become visible to queries after
// a second (-search.latencyOffset=1s; the default, 30 s, hides fresh data)
// and query results are not cached (-search.disableCache), so a read-back
// sees what was written. flags are added to the command line.
func StartVictoriaMetrics(t testing.TB, flags ...string) (baseURL string) {
	t.Helper()
	bin := RequireBinary(t, "victoria-metrics")
	return startServer(t, server{
		name: "victoria-metrics",
		args: func(dir string, port int) ([]string, error) {
			return append([]string{
				"-httpListenAddr=127.0.0.1:" + strconv.Itoa(port),
				"-storageDataPath=" + filepath.Join(dir, "data"),
				"-retentionPeriod=1d",
				"-search.latencyOffset=1s",
				"-search.disableCache",
			}, flags...), nil
		},
		bin:   bin,
		ready: func(status int, body string) bool { return status == http.StatusOK && strings.TrimSpace(body) == "OK" },
		path:  "/health",
	})
}

// StartPrometheus starts Prometheus on 127.0.0.1 at a free port with its
// TSDB in a temporary directory, the remote write receiver on
// (/api/v1/write) and no scrape targets, waits until GET /-/ready answers
// 200, and stops it when the test ends. It returns the base URL. flags are
// added to the command line.
func StartPrometheus(t testing.TB, flags ...string) (baseURL string) {
	t.Helper()
	return startPrometheusWith(t, PrometheusConfig(15*time.Second), "", append([]string{"--web.enable-remote-write-receiver"}, flags...)...)
}
