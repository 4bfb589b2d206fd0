package testutil

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ScrapeJob is one job of a Prometheus scrape configuration: targets are
// host:port pairs whose /metrics Prometheus scrapes.
type ScrapeJob struct {
	Name    string
	Targets []string
}

// PrometheusConfig is a Prometheus configuration that scrapes jobs every
// interval (also its global scrape_interval, which perflab reads from
// /api/v1/status/config).
func PrometheusConfig(interval time.Duration, jobs ...ScrapeJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# written by perflab testutil\nglobal:\n  scrape_interval: %v\n  scrape_timeout: %v\n", interval, interval)
	if len(jobs) > 0 {
		b.WriteString("scrape_configs:\n")
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "  - job_name: %q\n    static_configs:\n      - targets: [", j.Name)
		for i, tg := range j.Targets {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", tg)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// StartPrometheusScraping starts Prometheus on 127.0.0.1 at a free port
// with config (see PrometheusConfig) and its TSDB in a temporary
// directory, waits until it is ready, and stops it when the test ends.
// It returns the base URL.
func StartPrometheusScraping(t testing.TB, config string) (baseURL string) {
	t.Helper()
	return startPrometheusWith(t, config, "")
}

// StartPrometheusOnData starts Prometheus like StartPrometheusScraping but
// on the TSDB in dataDir (blocks made by PromtoolCreateBlocks), with no
// scrape targets, a 15 s scrape interval in its configuration and a
// retention long enough to keep old blocks.
func StartPrometheusOnData(t testing.TB, dataDir string) (baseURL string) {
	t.Helper()
	return startPrometheusWith(t, PrometheusConfig(15*time.Second), dataDir)
}

// startPrometheusWith starts Prometheus with config, its TSDB in dataDir
// (a temporary directory when ""), and flags added to its command line.
func startPrometheusWith(t testing.TB, config, dataDir string, flags ...string) string {
	t.Helper()
	bin := RequireBinary(t, "prometheus")
	return startServer(t, server{
		name: "prometheus",
		args: func(dir string, port int) ([]string, error) {
			conf := filepath.Join(dir, "prometheus.yml")
			if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
				return nil, fmt.Errorf("cannot write prometheus config: %w", err)
			}
			data := dataDir
			if data == "" {
				data = filepath.Join(dir, "data")
			}
			return append([]string{"--config.file=" + conf, "--storage.tsdb.path=" + data,
				"--storage.tsdb.retention.time=3650d", "--web.listen-address=127.0.0.1:" + strconv.Itoa(port)}, flags...), nil
		},
		bin:   bin,
		ready: func(status int, _ string) bool { return status == http.StatusOK },
		path:  "/-/ready",
	})
}

// PromtoolCreateBlocks turns an OpenMetrics file into TSDB blocks with
// Debian's promtool (tsdb create-blocks-from openmetrics) and returns the
// data directory that holds them.
func PromtoolCreateBlocks(t testing.TB, openMetrics string) (dataDir string) {
	t.Helper()
	bin := RequireBinary(t, "promtool")
	dataDir = filepath.Join(t.TempDir(), "data")
	out, err := exec.Command(bin, "tsdb", "create-blocks-from", "openmetrics", "--quiet", openMetrics, dataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	return dataDir
}

// StartProcessExporter starts Debian's prometheus-process-exporter on
// 127.0.0.1 with config (its process_names YAML), reading this machine's
// /proc, and stops it when the test ends.
func StartProcessExporter(t testing.TB, config string) Started {
	t.Helper()
	bin := RequireBinary(t, "prometheus-process-exporter")
	return startServerProcess(t, server{
		name: "prometheus-process-exporter",
		args: func(dir string, port int) ([]string, error) {
			conf := filepath.Join(dir, "process-exporter.yml")
			if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
				return nil, fmt.Errorf("cannot write process-exporter config: %w", err)
			}
			return []string{"-config.path=" + conf, "-web.listen-address=127.0.0.1:" + strconv.Itoa(port),
				"-threads=false", "-gather-smaps=false"}, nil
		},
		bin:   bin,
		ready: func(status int, _ string) bool { return status == http.StatusOK },
		path:  "/metrics",
	})
}

// StartNginxExporter starts Debian's prometheus-nginx-exporter on
// 127.0.0.1, reading nginx's stub_status at statusURL, and stops it when
// the test ends.
func StartNginxExporter(t testing.TB, statusURL string) Started {
	t.Helper()
	bin := RequireBinary(t, "prometheus-nginx-exporter")
	return startServerProcess(t, server{
		name: "prometheus-nginx-exporter",
		args: func(dir string, port int) ([]string, error) {
			return []string{"-nginx.scrape-uri=" + statusURL, "-web.listen-address=127.0.0.1:" + strconv.Itoa(port)}, nil
		},
		bin:   bin,
		ready: func(status int, _ string) bool { return status == http.StatusOK },
		path:  "/metrics",
	})
}

// StartNginxWithStatus starts nginx like StartNginx (every request answered
// 200 "ok\n") with its stub_status at /stub_status, for
// prometheus-nginx-exporter; Started tells its master's pid and prefix
// directory (which its command line names).
func StartNginxWithStatus(t testing.TB) Started {
	t.Helper()
	return startNginxProcess(t, "", "location = /stub_status { stub_status; }\n        "+DefaultNginxLocations)
}
