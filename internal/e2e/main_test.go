//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/observe/observers"
	"github.com/perflab/perflab/internal/testutil"
)

// asPerflab, set to 1 in a process's environment, makes this test binary
// perflab: TestMain runs cli.Main on its arguments, as cmd/perflab does.
// TestMain sets it for the tests, so that every process they start inherits
// it, and so does every process perflab starts from its own executable (a
// component's supervisor, local workers, {{perflab}} in a plan).
const asPerflab = "PERFLAB_E2E_AS_PERFLAB"

// perflab is the binary under test: this test binary, which is perflab
// when asPerflab is set.
var perflab string

// parallel is how many tests run at once unless -parallel says otherwise
// (its default is GOMAXPROCS): the tests spend most of their time waiting
// for load that lasts a set time, not on the CPU.
const parallel = 8

func TestMain(m *testing.M) {
	if os.Getenv(asPerflab) == "1" {
		if os.Getenv(withQueueObserver) == "1" {
			observers.All = append(observers.All, queueObserver{}) // its line in package observers
		}
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot find the test binary: %v\n", err)
		os.Exit(1)
	}
	perflab = exe
	if err := os.Setenv(asPerflab, "1"); err != nil {
		fmt.Fprintf(os.Stderr, "cannot set %s: %v\n", asPerflab, err)
		os.Exit(1)
	}
	testutil.Parallel(parallel)
	if scratch, err = os.MkdirTemp("", "perflab-e2e-"); err != nil {
		fmt.Fprintf(os.Stderr, "cannot make a scratch directory: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// scratch is a directory the tests share for what is built once (a
// static perflab), removed when they end.
var scratch string

// summary is the part of summary.json the tests read.
type summary struct {
	Version   int    `json:"version"`
	State     string `json:"state"`
	Workloads []struct {
		Name         string   `json:"name"`
		Requests     int64    `json:"requests"`
		Dropped      int64    `json:"dropped"`
		DroppedTotal int64    `json:"dropped_total"`
		Unissued     int64    `json:"unissued"`
		ClientBound  bool     `json:"client_bound"`
		Warnings     []string `json:"warnings"`
		Window       struct {
			Seconds float64 `json:"seconds"`
		} `json:"window"`
		Ops []struct {
			Name     string `json:"name"`
			Requests int64  `json:"requests"`
			OK       int64  `json:"ok"`
			Latency  quant  `json:"latency_ms"`
			Service  quant  `json:"service_time_ms"`
			TTFB     quant  `json:"ttfb_ms"`
			Errors   []struct {
				Class  string `json:"class"`
				Count  int64  `json:"count"`
				Sample string `json:"sample"`
			} `json:"errors"`
		} `json:"operations"`
	} `json:"workloads"`
}

type quant struct {
	Count                          int64
	P50, P90, P99, Max, P999, Mean float64
}

func (q *quant) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*q = quant{Count: int64(m["count"]), P50: m["p50"], P90: m["p90"], P99: m["p99"], P999: m["p99_9"], Max: m["max"], Mean: m["mean"]}
	return nil
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, perflabCmd(args...))
}

// runEnv runs perflab with args, with env (KEY=value) added to the
// environment it inherits: t.Setenv would keep the test from running in
// parallel.
func runEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := perflabCmd(args...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(t, cmd)
}

// perflabCmd is a command running the binary under test.
func perflabCmd(args ...string) *exec.Cmd { return exec.Command(perflab, args...) }

// runCmd runs cmd to its end and returns its exit status and output.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// startTarget runs `perflab target http` with args on a free loopback port.
func startTarget(t *testing.T, args ...string) string {
	t.Helper()
	return startBuiltin(t, "http", args...)
}

// startBuiltin runs `perflab target KIND` with args on a free loopback
// port and returns the base URL it says it listens on.
func startBuiltin(t *testing.T, kind string, args ...string) string {
	t.Helper()
	cmd := exec.Command(perflab, append([]string{"target", kind, "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("perflab target %s printed nothing: %v", kind, sc.Err())
	}
	line := sc.Text()
	go io.Copy(io.Discard, stdout)
	_, rest, ok := strings.Cut(line, "http://")
	if !ok {
		t.Fatalf("perflab target %s said %q", kind, line)
	}
	return "http://" + strings.Fields(rest)[0]
}

// atLeast fails the test unless list, named what, has n elements or more:
// a test that reads one by its index must fail on a short list, not panic
// and end every test of the package with it.
func atLeast[T any](t *testing.T, list []T, n int, what string) {
	t.Helper()
	if len(list) < n {
		t.Fatalf("%s: %d, want at least %d: %+v", what, len(list), n, list)
	}
}

func parseSummary(t *testing.T, b []byte) summary {
	t.Helper()
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, b)
	}
	return s
}

// runDir finds the run directory perflab announced on stderr.
func runDir(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if d, ok := strings.CutPrefix(l, "perflab: writing run to "); ok {
			return d
		}
	}
	t.Fatalf("no run directory in stderr:\n%s", stderr)
	return ""
}

// waitForProgress reads stderr until the first progress line, returning the
// run directory: the first interval is stored.
func waitForProgress(t *testing.T, stderr io.Reader) string {
	t.Helper()
	return waitForProgressLines(t, stderr, 1)
}

// waitForProgressLines reads stderr until the n-th progress line, returning
// the run directory. Off a terminal perflab prints the first interval's
// line and every fifth's: the second line says five intervals are stored,
// four of them inside a steady-state window that leaves out the first.
func waitForProgressLines(t *testing.T, stderr io.Reader, n int) string {
	t.Helper()
	sc := bufio.NewScanner(stderr)
	var dir string
	var lines []string
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		if d, ok := strings.CutPrefix(l, "perflab: writing run to "); ok {
			dir = d
		}
		if dir != "" && strings.Contains(l, "p99") {
			if n--; n == 0 {
				go io.Copy(io.Discard, stderr)
				return dir
			}
		}
	}
	t.Fatalf("perflab ended before showing progress:\n%s", strings.Join(lines, "\n"))
	return ""
}
