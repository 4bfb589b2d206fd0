package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/testutil"
)

// fakeCoordinator is the store side of a coordinator, for a worker under
// test: the manifest of plan for n workers, and phase 0 of profile p
// announced to start soon.
func fakeCoordinator(t *testing.T, planPath string, n int) (shard.Run, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := shard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := shard.Run{Store: store, ID: "rw"}
	text, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := run.PutManifest(ctx, shard.Manifest{Workers: n, Plan: string(text)}); err != nil {
		t.Fatal(err)
	}
	a := shard.Announcement{Phase: 0, CellName: "default", Profile: "p", StartAt: time.Now().Add(300 * time.Millisecond),
		Workloads: map[string]shard.Resolved{"get": {Name: "p/get"}}}
	if err := run.Announce(ctx, a); err != nil {
		t.Fatal(err)
	}
	return run, dir
}

// startWorker runs worker index of n in this process; its exit code comes
// on the channel.
func startWorker(t *testing.T, dir, planPath string, index, n int, stderr io.Writer) <-chan int {
	t.Helper()
	code := make(chan int, 1)
	go func() {
		e := &env{stdout: io.Discard, stderr: stderr}
		code <- e.main(context.Background(), []string{"worker", "--store", dir, "--run-id", "rw", "--index", itoa(index),
			"--workers", itoa(n), "--plan", planPath, "--wait", "1m"})
	}()
	return code
}

func itoa(i int) string { return strconv.Itoa(i) }

// awaitEnd follows worker w of phase 0 until its end, and returns what it
// delivered.
func awaitEnd(t *testing.T, run shard.Run, w, n int) (int64, *shard.End) {
	t.Helper()
	f := shard.NewFollower(run, 0, n)
	var ops int64
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got, _, err := f.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, iv := range got[w] {
			for _, op := range iv.Ops {
				ops += op.Classes.Total()
			}
		}
		if e := f.Ends()[w]; e != nil {
			return ops, e
		}
		time.Sleep(50 * time.Millisecond) // polling the store for the worker's end
	}
	t.Fatal("the worker never wrote its end")
	return 0, nil
}

// TestWorkerRunsItsShareAndEnds: worker 1 of 2 is given exactly its
// stride of the schedule from the announced start, delivers every arrival
// of it it issued and counts the others as dropped, says so in its end,
// and exits 0 when the coordinator says the run is done. A dropped
// arrival is judged against what the machine gave (testutil.Measure):
// beside the suite's other lines and four CPU hogs one of 101 was.
func TestWorkerRunsItsShareAndEnds(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL, 101, 2*time.Second)
	run, dir := fakeCoordinator(t, planPath, 2)
	machine := testutil.Measure(t)
	code := startWorker(t, dir, planPath, 1, 2, io.Discard)
	ops, end := awaitEnd(t, run, 1, 2)
	var d shard.Detail
	if err := json.Unmarshal(end.Detail, &d); err != nil {
		t.Fatal(err)
	}
	a, _, _ := run.Announcement(context.Background(), 0)
	if end.Error != "" || len(d.Workloads) != 1 || d.Workloads[0].Scheduled != 101 || ops+int64(d.Workloads[0].Dropped) != 101 ||
		hits.Load() != ops || !d.Workloads[0].Start.Equal(a.StartAt) {
		t.Errorf("worker 1 of 2 of 202 arrivals: error %q, %d operations delivered, %d hits, detail %+v; want 101 scheduled from %v, each delivered or dropped",
			end.Error, ops, hits.Load(), d, a.StartAt)
	}
	machine.Check(t, d.Workloads[0].Dropped == 0, testutil.Need{}, "%d of the 101 arrivals dropped", d.Workloads[0].Dropped)
	if err := run.PutDone(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != ExitOK {
		t.Errorf("exit %d after done, want 0", c)
	}
}

// TestWorkerStopsOnAbort: the coordinator's abort stops the load; the
// worker's end says it was interrupted, and it exits 0.
func TestWorkerStopsOnAbort(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL, 50, time.Hour)
	run, dir := fakeCoordinator(t, planPath, 1)
	code := startWorker(t, dir, planPath, 0, 1, io.Discard)
	awaitFile(t, filepath.Join(dir, "rw", "phases", "0", "shard-0", "part-000000.json")) // its load runs
	if err := run.PutAbort(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	_, end := awaitEnd(t, run, 0, 1)
	var d shard.Detail
	if err := json.Unmarshal(end.Detail, &d); err != nil {
		t.Fatal(err)
	}
	if end.Error != "" || !d.Workloads[0].Interrupted {
		t.Errorf("end %+v, detail %+v: want interrupted, no error", end, d)
	}
	if c := <-code; c != ExitOK {
		t.Errorf("exit %d after an abort, want 0", c)
	}
}

// TestWorkerStopsWhenTheStoreFails: once the worker cannot write its
// intervals it stops its load (what it measures would be lost) and exits
// 1, having issued far fewer requests than its schedule holds.
func TestWorkerStopsWhenTheStoreFails(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL, 50, time.Hour)
	_, dir := fakeCoordinator(t, planPath, 1)
	var stderr lockedBuffer
	code := startWorker(t, dir, planPath, 0, 1, &stderr)
	shardDir := filepath.Join(dir, "rw", "phases", "0", "shard-0")
	awaitFile(t, filepath.Join(shardDir, "part-000000.json"))
	// The shard's directory becomes a file: every later write fails.
	if err := os.RemoveAll(shardDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shardDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != ExitFailed {
		t.Errorf("exit %d, want 1:\n%s", c, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping: cannot write worker 0's intervals") || hits.Load() >= 50*3600 {
		t.Errorf("%d requests of an hour's 180000; stderr:\n%s", hits.Load(), stderr.String())
	}
}

func TestWorkerRefusesAnotherPlan(t *testing.T) {
	planPath := httpPlan(t, "http://127.0.0.1:1/", 1, time.Second)
	_, dir := fakeCoordinator(t, planPath, 1)
	other := httpPlan(t, "http://127.0.0.1:2/", 1, time.Second)
	var stderr lockedBuffer
	if c := <-startWorker(t, dir, other, 0, 1, &stderr); c != ExitUsage || !strings.Contains(stderr.String(), "is not the one the coordinator runs") {
		t.Errorf("exit %d:\n%s", c, stderr.String())
	}
}

// awaitFile waits until path exists (a worker wrote it).
func awaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, err := os.Stat(path); err != nil; _, err = os.Stat(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never came", path)
		}
		time.Sleep(20 * time.Millisecond) // polling the store
	}
}

// TestRunCoordinatesWorkersStartedElsewhere: perflab run --workers N
// --store URL --run-id ID (the coordinator of workers it did not start,
// as perflab k8s manifest says to run it) merges their load: a Launcher
// that knows of no failure fails no worker.
func TestRunCoordinatesWorkersStartedElsewhere(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL, 50, 2*time.Second)
	store, runID := t.TempDir(), "rext"
	codes := make(chan int, 2)
	for i := range 2 {
		go func() {
			we := &env{stdout: io.Discard, stderr: io.Discard}
			codes <- we.main(context.Background(), []string{"worker", "--store", store, "--run-id", runID, "--index", itoa(i),
				"--workers", "2", "--plan", planPath, "--wait", "1m"})
		}()
	}
	var stderr lockedBuffer
	e := &env{stdout: io.Discard, stderr: &stderr}
	machine := testutil.Measure(t)
	code := e.main(context.Background(), []string{"run", planPath, "--workers", "2", "--store", store, "--run-id", runID,
		"--out", t.TempDir()})
	for range 2 {
		if c := <-codes; c != ExitOK {
			t.Errorf("a worker exited %d", c)
		}
	}
	if code != ExitOK || hits.Load() > 100 {
		t.Errorf("exit %d, %d requests; want 0 and 2 s × 50/s:\n%s", code, hits.Load(), stderr.String())
	}
	// fewer are arrivals dropped, as a busy machine drops them
	machine.Check(t, hits.Load() == 100, testutil.Need{}, "%d requests; want 2 s × 50/s:\n%s", hits.Load(), stderr.String())
}

func TestWorkerRefusesBadInvocations(t *testing.T) {
	t.Setenv("PERFLAB_STORE", "")
	t.Setenv("PERFLAB_RUN_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "x")
	t.Setenv("PERFLAB_WORKERS", "")
	var out, errOut strings.Builder
	code := Main(t.Context(), []string{"worker", "--workers", "2", "--wait", "0s"}, &out, &errOut)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d", code, ExitUsage)
	}
	for _, want := range []string{`JOB_COMPLETION_INDEX="x" is not a whole number`, "give --store or set PERFLAB_STORE",
		"give --run-id or set PERFLAB_RUN_ID", "--wait 0s must be > 0"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	errOut.Reset()
	code = Main(t.Context(), []string{"worker", "--store", t.TempDir(), "--run-id", "r", "--index", "3", "--workers", "2"}, &out, &errOut)
	if code != ExitUsage || !strings.Contains(errOut.String(), "index 3 is not one of the 2 workers") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

// TestRunRefusesAStoreWithCredentials (issue 16, item 8): --store with a
// credential in its query is refused before anything starts, exit 2,
// without repeating it.
func TestRunRefusesAStoreWithCredentials(t *testing.T) {
	planPath := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(planPath, []byte(`name: s
profiles:
  - name: p
    duration: 1s
    workloads: [{name: get, driver: http, rate: 1/s, params: {url: "http://127.0.0.1:1/"}}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, _, errs := mainOut("run", planPath, "--workers", "2", "--out", out,
		"--store", "s3://b/x?endpoint=http://127.0.0.1:1&secret_key=hunter2-SEKRET")
	if code != ExitUsage || !strings.Contains(errs, `query parameter "secret_key" holds a credential`) || strings.Contains(errs, "hunter2") {
		t.Errorf("exit %d, want %d naming the parameter, not its value:\n%s", code, ExitUsage, errs)
	}
	if dirs, _ := filepath.Glob(filepath.Join(out, "*")); len(dirs) != 0 {
		t.Errorf("a refused run left %v", dirs)
	}
}
