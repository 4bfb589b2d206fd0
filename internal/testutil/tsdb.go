package testutil

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	serverStartTimeout = 30 * time.Second
	serverStopTimeout  = 10 * time.Second
	serverBindAttempts = 3
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

// server says how to start one kind of server and see that it is ready.
type server struct {
	name  string
	bin   string
	args  func(dir string, port int) ([]string, error)
	path  string                             // GET'ed until ready says so
	ready func(status int, body string) bool // is the server ready?
}

// startServer starts s at a free port, trying another port when the one
// picked was taken meanwhile, and registers its stop with t.Cleanup.
func startServer(t testing.TB, s server) string {
	t.Helper()
	var err error
	for range serverBindAttempts {
		dir := t.TempDir()
		port := FreePort(t)
		var p *process
		p, err = startProcess(s, dir, port)
		if err == nil {
			t.Cleanup(func() {
				if err := p.stop(); err != nil {
					t.Errorf("cannot stop %s: %v", s.name, err)
				}
			})
			return "http://127.0.0.1:" + strconv.Itoa(port)
		}
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	t.Fatalf("cannot start %s: %v", s.name, err)
	return ""
}

// process is one server process we started.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed when it has exited
}

func startProcess(s server, dir string, port int) (*process, error) {
	args, err := s.args(dir, port)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "output.log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s output file: %w", s.name, err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", s.bin, err)
	}
	p := &process{name: s.name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitReady(s, port); err != nil {
		_ = p.stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls s.path until s.ready says so, the process exits, or
// serverStartTimeout passes.
func (p *process) waitReady(s server, port int) error {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + s.path
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(serverStartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			logs := p.logs()
			if strings.Contains(logs, "address already in use") {
				return fmt.Errorf("port %d: %w", port, errAddrInUse)
			}
			return fmt.Errorf("%s exited: %s", s.name, logs)
		default:
		}
		if resp, err := client.Get(url); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			resp.Body.Close()
			if s.ready(resp.StatusCode, string(body)) {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s was not ready at %s within %v: %s", s.name, url, serverStartTimeout, p.logs())
}

// stop sends SIGTERM to the process we started and kills it if it has not
// exited in time.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(serverStopTimeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("%s (pid %d) ignored SIGTERM for %v and was killed", p.name, p.cmd.Process.Pid, serverStopTimeout)
}

// logs returns the last few KiB of the process's output, for failure messages.
func (p *process) logs() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4<<10 {
		b = b[len(b)-4<<10:]
	}
	return strings.TrimSpace(string(b))
}
