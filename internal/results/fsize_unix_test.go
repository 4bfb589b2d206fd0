//go:build unix

package results

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const fsizeChildEnv = "PERFLAB_RESULTS_TEST_FSIZE_PARENT"

// TestFinishAfterFileSizeLimit runs, in a child process, a run whose WAL
// reaches the process's file-size limit (RLIMIT_FSIZE; Go ignores SIGXFSZ,
// so the write fails with EFBIG): the next interval cannot be written, and
// Finish and Close must still record the failure and seal the run, which
// then reads back with the intervals written before.
func TestFinishAfterFileSizeLimit(t *testing.T) {
	if parent := os.Getenv(fsizeChildEnv); parent != "" {
		fillAndFinish(t, parent)
		return
	}
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFinishAfterFileSizeLimit$", "-test.v")
	cmd.Env = append(os.Environ(), fsizeChildEnv+"="+parent)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	dirs, err := os.ReadDir(parent)
	if err != nil || len(dirs) != 1 {
		t.Fatalf("child left %v, %v; want one run directory", dirs, err)
	}
	dir := filepath.Join(parent, dirs[0].Name())
	checkSealed(t, dir)
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s, err := r.Status(); err != nil || s.State != StateFailed || s.Message != "store full" {
		t.Errorf("status = %+v, %v; want failed with the message", s, err)
	}
	got, err := r.Intervals("ingest")
	if err != nil || len(got) != 3 {
		t.Fatalf("%d intervals, %v; want the 3 written before the limit", len(got), err)
	}
}

// fillAndFinish is the child of TestFinishAfterFileSizeLimit.
func fillAndFinish(t *testing.T, parent string) {
	r := writeThree(t, parent)
	fi, err := os.Stat(filepath.Join(r.Dir(), DBName+"-wal"))
	if err != nil {
		t.Fatal(err)
	}
	lim := syscall.Rlimit{Cur: uint64(fi.Size()), Max: uint64(fi.Size())}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteInterval("ingest", testInterval(3)); err == nil {
		t.Fatal("an interval past the file-size limit was written")
	} else {
		t.Logf("write past the limit: %v", err)
	}
	if err := r.Finish(Status{State: StateFailed, Ended: testStart.Add(time.Minute), Message: "store full", ExitCode: 1}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
