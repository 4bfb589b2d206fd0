package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// fullStore writes the first ok intervals to the run store and fails every
// later one as a full disk would.
type fullStore struct {
	w  run.IntervalWriter
	ok int64
	n  atomic.Int64
}

func (f *fullStore) WriteInterval(workload string, iv *stats.Interval) error {
	if f.n.Add(1) > f.ok {
		return fmt.Errorf("cannot write interval %d of %q: %w", iv.Index, workload, syscall.ENOSPC)
	}
	return f.w.WriteInterval(workload, iv)
}

// storeFailEnv is an env whose runs keep only their first ok intervals.
func storeFailEnv(ok int64) (*env, *bytes.Buffer) {
	var stderr bytes.Buffer
	return &env{stdout: &bytes.Buffer{}, stderr: &stderr,
		intervals: func(r *results.Run) run.IntervalWriter { return &fullStore{w: r, ok: ok} }}, &stderr
}

// checkStoreFailure checks what a run whose store failed after ok intervals
// left: exit 1, a message that says so, and a sealed run directory that
// reads back the ok intervals and the failure.
func checkStoreFailure(t *testing.T, e *env, stderr *bytes.Buffer, err error, out string, ok int) {
	t.Helper()
	if code := e.exit(err); code != ExitFailed {
		t.Errorf("exit %d, want %d", code, ExitFailed)
	}
	msg := stderr.String()
	kept := fmt.Sprintf("%d intervals were kept in", ok)
	if ok == 1 {
		kept = "1 interval was kept in"
	}
	for _, want := range []string{"perflab: stopping: the run store cannot write", "the run store failed and the load was stopped early",
		"no space left on device", kept, "read them with: perflab report "} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v, want one", dirs)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], results.DBName+"-wal")); err == nil {
		t.Error("the run was left in WAL mode")
	}
	r, err := results.OpenReadOnly(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s, err := r.Status(); err != nil || s.State != results.StateFailed || !strings.Contains(s.Message, "no space left on device") {
		t.Errorf("status = %+v, %v; want failed, saying why", s, err)
	}
	ws, err := r.Workloads()
	if err != nil || len(ws) != 1 {
		t.Fatalf("workloads %+v, %v", ws, err)
	}
	if ivs, err := r.Intervals(ws[0].Name); err != nil || len(ivs) != ok {
		t.Errorf("%d intervals read back, %v; want %d", len(ivs), err, ok)
	}
}

// TestStoreFailureStopsTheLoad runs perflab http against a server on
// 127.0.0.1 with a store that fails after one interval: the load must stop
// then, as at an interrupt, not run its 60 s to the end; the run still
// ends with its state recorded.
func TestStoreFailureStopsTheLoad(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	defer srv.Close()
	e, stderr := storeFailEnv(1)
	out := t.TempDir()
	err := e.httpCmd(context.Background(), []string{srv.URL + "/", "--rate", "100/s", "--duration", "60s", "--out", out})
	checkStoreFailure(t, e, stderr, err, out, 1)
	// About 200 requests before the failure; the whole schedule 6000.
	if n := served.Load(); n > 6000/4 {
		t.Errorf("the server answered %d requests after the store failed; the load was not stopped", n)
	}
}

// TestPlanStoreFailureStopsTheLoad is TestStoreFailureStopsTheLoad for a
// plan run against a server on 127.0.0.1: one interval is kept, the load of
// 60 s stops after it.
func TestPlanStoreFailureStopsTheLoad(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	plan := fmt.Sprintf(`name: full
profiles:
  - name: only
    duration: 60s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: %q}}
`, srv.URL+"/")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	e, stderr := storeFailEnv(1)
	out := filepath.Join(dir, "runs")
	err := e.runPlan(context.Background(), []string{path, "--out", out})
	checkStoreFailure(t, e, stderr, err, out, 1)
	// About 200 requests before the failure; the whole schedule 6000.
	if n := served.Load(); n > 6000/4 {
		t.Errorf("the server answered %d requests after the store failed; the load was not stopped", n)
	}
}

// TestDistributedStoreFailureStopsTheWorkers is TestPlanStoreFailureStopsTheLoad
// for a run whose load two workers make: the coordinator's store failure
// stops them too, through the shared store, and tells them why.
func TestDistributedStoreFailureStopsTheWorkers(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL+"/", 100, 60*time.Second)
	store, runID, out := t.TempDir(), "rfull", filepath.Join(t.TempDir(), "runs")
	var logs [2]lockedBuffer
	codes := make(chan int, 2)
	for i := range logs {
		go func() {
			we := &env{stdout: &bytes.Buffer{}, stderr: &logs[i]}
			codes <- we.main(context.Background(), []string{"worker", "--store", store, "--run-id", runID, "--index", fmt.Sprint(i),
				"--workers", "2", "--plan", planPath, "--wait", "1m"})
		}()
	}
	e, stderr := storeFailEnv(1)
	err := e.runPlan(context.Background(), []string{planPath, "--workers", "2", "--store", store, "--run-id", runID, "--out", out})
	checkStoreFailure(t, e, stderr, err, out, 1)
	for range logs {
		<-codes
	}
	// About 200 requests before the failure; the whole schedule 6000.
	if n := served.Load(); n > 6000/4 {
		t.Errorf("the server answered %d requests after the store failed; the workers were not stopped", n)
	}
	for i := range logs {
		if !strings.Contains(logs[i].String(), "the coordinator aborted the run: stopped: the run store failed") {
			t.Errorf("worker %d was not told why it was stopped:\n%s", i, logs[i].String())
		}
	}
}
