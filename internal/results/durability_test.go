package results

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// writeThree creates a run in parent with a cell, a phase, a component, one
// workload, intervals 0..2 and three sample ticks, leaving it open,
// unfinished.
func writeThree(t testing.TB, parent string) *Run {
	t.Helper()
	r, err := Create(parent, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddCell(Cell{Index: 0, Name: "only", Started: testStart}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPhase(Phase{Profile: "small", Start: testStart}); err != nil {
		t.Fatal(err)
	}
	addComponents(t, r, 0, "target")
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := r.WriteInterval("ingest", testInterval(i)); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteSamples(0, testStart.Add(time.Duration(i)*time.Second), threeSamples(i)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func threeSamples(i int) map[string][]Sample {
	return map[string][]Sample{"target": {{"cpu_cores", float64(i)}, {"rss_bytes", float64(1000 + i)}}}
}

// checkUnfinished checks that the run in dir reads as running and holds the
// three intervals of writeThree.
func checkUnfinished(t *testing.T, dir string) {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkThree(t, r)
}

// checkThree checks that r reads as running and holds the three intervals
// and sample ticks of writeThree.
func checkThree(t *testing.T, r *Run) {
	t.Helper()
	s, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s.State != StateRunning || !s.Ended.IsZero() {
		t.Errorf("status = %+v, want running with no end", s)
	}
	got, err := r.Intervals("ingest")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d intervals, want 3", len(got))
	}
	for i := range got {
		checkInterval(t, got[i], testInterval(i))
	}
	samples, err := r.Samples(0)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range samples["target"]["rss_bytes"] {
		if p.V != float64(1000+i) || !p.T.Equal(testStart.Add(time.Duration(i)*time.Second)) {
			t.Errorf("rss_bytes sample %d = %+v", i, p)
		}
	}
	if n := len(samples["target"]["cpu_cores"]) + len(samples["target"]["rss_bytes"]); n != 6 {
		t.Errorf("%d samples, want 6", n)
	}
	if cs, err := r.Cells(); err != nil || len(cs) != 1 || cs[0].State != StateRunning {
		t.Errorf("cells = %+v, %v; want one running", cs, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnfinishedRunKeepsIntervals snapshots the files of a run that was
// neither finished nor closed, as a killed process leaves them, and reads
// the snapshot; it also reads the live run through a second handle.
func TestUnfinishedRunKeepsIntervals(t *testing.T) {
	r := writeThree(t, t.TempDir())
	defer r.Close()
	wal := filepath.Join(r.Dir(), DBName+"-wal")
	if fi, err := os.Stat(wal); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL beside an open run (%v): the store is not in WAL mode", err)
	}
	snap := t.TempDir()
	copyFile(t, filepath.Join(r.Dir(), DBName), filepath.Join(snap, DBName))
	copyFile(t, wal, filepath.Join(snap, DBName+"-wal"))
	t.Run("snapshot", func(t *testing.T) { checkUnfinished(t, snap) })
	t.Run("second handle", func(t *testing.T) { checkUnfinished(t, r.Dir()) })
}

const killChildEnv = "PERFLAB_RESULTS_TEST_KILL_PARENT"

// TestKilledProcessKeepsIntervals runs writeThree in a child process,
// SIGKILLs it, and reads what it left behind.
func TestKilledProcessKeepsIntervals(t *testing.T) {
	if parent := os.Getenv(killChildEnv); parent != "" {
		r := writeThree(t, parent)
		fmt.Println(r.Dir())
		time.Sleep(time.Minute) // wait to be killed
		os.Exit(3)
	}
	cmd, dir := startWriter(t)
	killWriter(t, cmd)
	if _, err := os.Stat(filepath.Join(dir, DBName+"-wal")); err != nil {
		t.Fatalf("killed run left no WAL (%v); the test did not exercise recovery", err)
	}
	checkUnfinished(t, dir)
}

// startWriter starts a child process that writes writeThree's run and
// waits, the run open, to be killed; it returns the run's directory once
// the run is written.
func startWriter(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs a killable child process and POSIX file semantics")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledProcessKeepsIntervals$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	dir, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child wrote no run directory: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd, strings.TrimSpace(dir)
}

// killWriter SIGKILLs a child of startWriter and waits for it to end.
func killWriter(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

func TestConcurrentWriteInterval(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := []string{"w0", "w1", "w2", "w3"}
	for _, n := range names {
		if err := r.AddWorkload(Workload{Name: n, Driver: "http", Model: ModelOpen, Rate: 100}); err != nil {
			t.Fatal(err)
		}
	}
	const perWorkload = 20
	var wg sync.WaitGroup
	errs := make(chan error, len(names)*perWorkload+perWorkload)
	for _, n := range names {
		wg.Go(func() {
			for i := range perWorkload {
				if err := r.WriteInterval(n, testInterval(i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() { // a reader alongside the writers always sees whole intervals
		for range perWorkload {
			if _, err := r.Intervals("w0"); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, n := range names {
		got, err := r.Intervals(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != perWorkload {
			t.Fatalf("%s: %d intervals, want %d", n, len(got), perWorkload)
		}
		for i := range got {
			checkInterval(t, got[i], testInterval(i))
		}
	}
	checkRowCount(t, r, "op_intervals", len(names)*perWorkload*3)
	checkRowCount(t, r, "op_errors", len(names)*perWorkload*2)
	checkRowCount(t, r, "op_measures", len(names)*perWorkload*2)
	checkRowCount(t, r, "op_counters", len(names)*perWorkload*1)
}

func checkRowCount(t *testing.T, r *Run, table string, want int) {
	t.Helper()
	var n int
	if err := r.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("%s has %d rows, want %d", table, n, want)
	}
}

// BenchmarkWriteInterval measures the per-interval cost of the store:
// encoding two operations' histograms and one committed transaction.
func BenchmarkWriteInterval(b *testing.B) {
	r, err := Create(b.TempDir(), testMeta())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		b.Fatal(err)
	}
	iv := testInterval(0)
	var ivs []*stats.Interval
	for i := range b.N {
		c := *iv
		c.Index = i
		ivs = append(ivs, &c)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := r.WriteInterval("ingest", ivs[i]); err != nil {
			b.Fatal(err)
		}
	}
}
