package testutil

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// prometheus3Install is how scripts/install-deps.sh gets Prometheus 3:
// built from the module proxy, beside Debian's Prometheus 2.42, as
// prometheus3.
const prometheus3Install = "GOBIN=$tmp go install github.com/prometheus/prometheus/cmd/prometheus@v0.316.0 && mv $tmp/prometheus $(go env GOPATH)/bin/prometheus3"

// Prometheus3Binary returns the path of Prometheus 3 (prometheus3 in PATH,
// GOBIN or GOPATH/bin); when it is missing the test is skipped (or fails,
// see Unavailable).
func Prometheus3Binary(t testing.TB) string {
	t.Helper()
	return goBinary(t, "prometheus3", prometheus3Install)
}

// StartPrometheus3 starts Prometheus 3 on 127.0.0.1 at a free port as a
// remote write receiver that accepts both messages (remote write 1.0's
// prometheus.WriteRequest and 2.0's io.prometheus.write.v2.Request), with
// exemplar storage on (native histograms need no flag in 3.x), its TSDB
// in a temporary directory, and stops it when the test ends. It returns
// the base URL.
func StartPrometheus3(t testing.TB, flags ...string) (baseURL string) {
	t.Helper()
	bin := Prometheus3Binary(t)
	return startServer(t, server{
		name: "prometheus3",
		args: func(dir string, port int) ([]string, error) {
			conf := filepath.Join(dir, "prometheus.yml")
			if err := os.WriteFile(conf, []byte(PrometheusConfig(15*time.Second)), 0o644); err != nil {
				return nil, fmt.Errorf("cannot write prometheus config: %w", err)
			}
			return append([]string{"--config.file=" + conf, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
				"--web.listen-address=127.0.0.1:" + strconv.Itoa(port), "--web.enable-remote-write-receiver",
				"--web.remote-write-receiver.accepted-protobuf-messages=prometheus.WriteRequest",
				"--web.remote-write-receiver.accepted-protobuf-messages=io.prometheus.write.v2.Request",
				"--enable-feature=exemplar-storage"}, flags...), nil
		},
		bin:   bin,
		ready: func(status int, _ string) bool { return status == http.StatusOK },
		path:  "/-/ready",
	})
}
