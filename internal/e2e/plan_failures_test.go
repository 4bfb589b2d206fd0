//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// TestRunPlanComponentCrash kills a component in the middle of the first
// of two cells: that cell fails with the time and how it ended, what was
// measured before stays, the second cell still runs, and the exit status
// is 1. The victim kills itself once the target has answered 2.5 s of the
// load (told by a file the test creates), however long the start took.
func TestRunPlanComponentCrash(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	signal := filepath.Join(t.TempDir(), "crash")
	stop := make(chan struct{})
	defer close(stop)
	go touchAfterRequests(fmt.Sprintf("http://127.0.0.1:%d/", port), 250, signal, stop)
	path := writePlan(t, fmt.Sprintf(`
name: crash
sample_interval: 500ms
components:
  - name: victim
    run: {command: sh, args: [-c, 'if [ {{fate}} = crash ]; then while [ ! -e "$0" ]; do sleep 0.05; done; kill -9 $$; fi; exec sleep 60', %[2]q], stop_grace: 1s}
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
matrix:
  fate: [crash, live]
profiles:
  - name: load
    duration: 6s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
  - name: more
    duration: 1s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port, signal))
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, "hint:") {
		t.Errorf("exit %d, want 1 with a hint\n%s", r.code, r.stderr)
	}
	s, md, _ := readRun(t, r)
	if len(s.Cells) != 2 {
		t.Fatalf("%d cells", len(s.Cells))
	}
	crashed, live := s.Cells[0], s.Cells[1]
	if crashed.State != "failed" || !strings.Contains(crashed.Message, "victim exited at") ||
		!strings.Contains(crashed.Message, "SIGKILL") {
		t.Errorf("crashed cell: %s: %s", crashed.State, crashed.Message)
	}
	if _, exited, how, _ := crashed.component("victim"); exited == "" || !strings.Contains(how, "SIGKILL") {
		t.Errorf("victim: exited %q, %q", exited, how)
	}
	if len(crashed.Phases) != 1 || crashed.Phases[0].State != "failed" {
		t.Errorf("crashed cell ran %d phases, want the one the crash cut", len(crashed.Phases))
	}
	if live.State != "completed" || len(live.Phases) != 2 {
		t.Errorf("second cell: %s with %d phases: %s", live.State, len(live.Phases), live.Message)
	}
	for _, w := range s.Workloads {
		if w.Cell == 0 && (len(w.Ops) == 0 || w.Ops[0].Requests < 50) {
			t.Errorf("%s: %+v kept from before the crash, want ≥ 50 requests", w.Name, w.Ops)
		}
	}
	if s.State != "failed" || !strings.Contains(md, "exited during the run") {
		t.Errorf("run state %q; report.md does not note the exit", s.State)
	}
}

// touchAfterRequests creates the file path once the built-in target at url
// has answered n requests, polling its /metrics until then or until stop
// is closed.
func touchAfterRequests(url string, n int64, path string, stop <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if got, err := servedRequests(url); err == nil && got >= n {
			_ = os.WriteFile(path, nil, 0o644)
			return
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// TestRunPlanNotReady: a component that never gets ready fails its cell
// with its last log lines; the next cell still runs.
func TestRunPlanNotReady(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: notready
components:
  - name: web
    run:
      command: sh
      args: [-c, 'if [ {{mode}} = broken ]; then echo "fatal: config line 7 is broken" >&2; exec sleep 60; fi; exec "$0" target http --addr 127.0.0.1:%[1]d', "{{perflab}}"]
      ready: {http: "http://127.0.0.1:%[1]d/health", timeout: 1500ms}
      stop_grace: 1s
matrix:
  mode: [broken, ok]
profiles:
  - name: load
    duration: 2s
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port))
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	s, _, dir := readRun(t, r)
	if len(s.Cells) != 2 {
		t.Fatalf("%d cells", len(s.Cells))
	}
	if c := s.Cells[0]; c.State != "failed" || !strings.Contains(c.Message, "fatal: config line 7 is broken") ||
		!strings.Contains(c.Message, "not ready after 1.5s") {
		t.Errorf("broken cell: %s: %s", c.State, c.Message)
	}
	if c := s.Cells[1]; c.State != "completed" || len(c.Phases) != 1 {
		t.Errorf("second cell: %s: %s", c.State, c.Message)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "logs", "cell-0", "web.stderr.log")); err != nil || !strings.Contains(string(b), "broken") {
		t.Errorf("the component's stderr is not kept in the run directory: %v %q", err, b)
	}
}

// TestRunPlanSecrets: values of ${VAR} references reach the component and
// the request, and no file of the run directory.
func TestRunPlanSecrets(t *testing.T) {
	t.Parallel()
	const secret = "plan-secret-4711"
	port := testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: secrets
components:
  - name: web
    run:
      command: sh
      args: [-c, 'echo "token is $TOKEN"; exec "$0" target http --addr 127.0.0.1:%[1]d', "{{perflab}}"]
      env: {TOKEN: "${PERFLAB_TEST_TOKEN}"}
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: "http://127.0.0.1:%[1]d/metrics?token=${PERFLAB_TEST_TOKEN}"
profiles:
  - name: load
    duration: 1s
    workloads:
      - name: get
        driver: http
        rate: 20/s
        params:
          url: "http://127.0.0.1:%[1]d/?key=${PERFLAB_TEST_TOKEN}"
          headers: {Authorization: "Bearer ${PERFLAB_TEST_TOKEN}", X-Note: "${PERFLAB_TEST_TOKEN}", X-Api-Key: literal-key-8152}
`, port))
	cmd := perflabCmd("run", path, "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "PERFLAB_TEST_TOKEN="+secret)
	r := runCmd(t, cmd)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	logged, _ := os.ReadFile(filepath.Join(dir, "logs", "cell-0", "web.stdout.log"))
	if !strings.Contains(string(logged), "token is ${PERFLAB_TEST_TOKEN}") {
		t.Errorf("the component did not get the secret, or its log was not scrubbed: %q", logged)
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range []string{secret, "literal-key-8152"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s contains the secret %s", p, s)
			}
		}
		return nil
	})
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("the secret was printed")
	}
}

// TestRunPlanInterrupt: Ctrl-C stops the load, stops the components and
// still writes the report; the exit status is 130.
func TestRunPlanInterrupt(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: interrupt
components:
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: long
    duration: 1h
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port))
	cmd := perflabCmd("run", path, "--out", t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dir := waitForProgressLines(t, stderr, 2) // whole intervals inside the window: see TestInterruptFinishesTheReport
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want 130", err)
	}
	r := run(t, "report", dir, "--format", "json")
	var s planSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("%v\n%s", err, r.stderr)
	}
	if s.State != "interrupted" || len(s.Cells) != 1 || s.Cells[0].State != "interrupted" || len(s.Workloads) == 0 || s.Workloads[0].Requests == 0 {
		t.Fatalf("state %q, cells %+v", s.State, s.Cells)
	}
	for _, c := range s.Cells[0].Components {
		if c.Kind == "run" && syscall.Kill(c.PID, 0) == nil {
			t.Errorf("component %s (pid %d) still runs after the run ended", c.Name, c.PID)
		}
	}
}

// TestRunPlanAttach measures a process perflab did not start, and leaves
// it running; --profile picks the profiles to run.
func TestRunPlanAttach(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	srv := exec.Command(perflab, "target", "http", "--addr", fmt.Sprintf("127.0.0.1:%d", port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	path := writePlan(t, fmt.Sprintf(`
name: attach
sample_interval: 500ms
components:
  - name: server
    attach: {pid: %[2]d}
    metrics: http://127.0.0.1:%[1]d/metrics
profiles:
  - name: skipped
    duration: 1h
    workloads: [{name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}]
  - name: picked
    duration: 2s
    workloads: [{name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}]
`, port, srv.Process.Pid))
	waitListening(t, port)
	r := run(t, "run", path, "--profile", "picked", "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, _, _ := readRun(t, r)
	if len(s.Cells) != 1 || len(s.Cells[0].Phases) != 1 || s.Cells[0].Phases[0].Profile != "picked" {
		t.Fatalf("cells %+v", s.Cells)
	}
	if kind, _, _, _ := s.Cells[0].component("server"); kind != "attach" {
		t.Errorf("server is of kind %q, want attach", kind)
	}
	res := s.Cells[0].Phases[0].Resources
	if res == nil || len(res.Components) == 0 || res.Components[0].Memory == nil || res.Components[0].Memory.Max < 1<<20 {
		t.Errorf("no memory figures of the attached server: %+v", res)
	}
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("perflab stopped a component it did not start: %v", err)
	}
}

// waitListening waits until something accepts connections on port.
func waitListening(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on port %d after a minute", port)
}

// A component whose command is not on this machine is refused before
// anything starts, at its position (exit 2, no run directory), as the
// first component of the plan would otherwise be started, waited for and
// stopped before the cell failed; plan check, which may check a plan
// meant for another machine, warns.
func TestRunRefusesAMissingCommand(t *testing.T) {
	t.Parallel()
	path := writePlan(t, `
name: missing
components:
  - name: first
    run: {command: "{{perflab}}", args: [target, http, --addr, "127.0.0.1:0"]}
  - name: server
    run:
      command: perflab-no-such-server
profiles:
  - name: p
    duration: 1s
    workloads:
      - {name: get, driver: http, rate: 1/s, params: {url: "http://127.0.0.1:9/"}}
`)
	out := t.TempDir()
	r := run(t, "run", path, "--out", out)
	want := `plan.yaml:8:16: component server: command "perflab-no-such-server" is not found in PATH`
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a run directory was created: %v", entries)
	}
	r = run(t, "plan", "check", path)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, want) {
		t.Errorf("plan check: exit %d, want 0 and a warning %q:\n%s", r.code, want, r.stderr)
	}
}

// TestRunPlanPrometheusUnreachable: a component read from a Prometheus
// that nothing listens on fails its cell before any load, with a message
// that names the component, the cause and what to check; the old run
// sent the whole profile's load and only then warned that the component
// had no figures.
func TestRunPlanPrometheusUnreachable(t *testing.T) {
	t.Parallel()
	port, prom := testutil.FreePort(t), testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: promgone
components:
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
  - name: ingester
    observe: prometheus
    prometheus: {url: "http://127.0.0.1:%[2]d", preset: kubernetes, namespace: tempo, pod: "tempo-ingester-.*"}
profiles:
  - name: load
    duration: 30s
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port, prom))
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	s, _, _ := readRun(t, r)
	if len(s.Cells) != 1 {
		t.Fatalf("%d cells", len(s.Cells))
	}
	c := s.Cells[0]
	for _, want := range []string{"component ingester (observe: prometheus)", "connection refused", "no load was sent"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("cell message lacks %q: %s", want, c.Message)
		}
	}
	if c.State != "failed" || len(c.Phases) != 0 {
		t.Errorf("cell %s with %d phases, want failed before the first", c.State, len(c.Phases))
	}
}
