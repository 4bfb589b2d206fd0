package testutil

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	bin := RequireBinary(t, "prometheus")
	return startServer(t, server{
		name: "prometheus",
		args: func(dir string, port int) ([]string, error) {
			conf := filepath.Join(dir, "prometheus.yml")
			if err := os.WriteFile(conf, []byte("# written by perflab testutil\nglobal:\n  scrape_interval: 15s\n"), 0o644); err != nil {
				return nil, fmt.Errorf("cannot write prometheus config: %w", err)
			}
			return append([]string{
				"--config.file=" + conf,
				"--storage.tsdb.path=" + filepath.Join(dir, "data"),
				"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
				"--web.enable-remote-write-receiver",
			}, flags...), nil
		},
		bin:   bin,
		ready: func(status int, _ string) bool { return status == http.StatusOK },
		path:  "/-/ready",
	})
}
