package results

import (
	"database/sql"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

func checkSameTree(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := testutil.TreeHash(t, dir)
	if !maps.Equal(before, after) {
		t.Errorf("the run directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

// journalMode is the journal mode results.db in dir is left in, read
// through its own connection.
func journalMode(t *testing.T, dir string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

func checkSealed(t *testing.T, dir string) {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if !slices.Equal(names, []string{DBName}) {
		t.Errorf("the closed run directory holds %v, want only %s", names, DBName)
	}
	if m := journalMode(t, dir); m != "delete" {
		t.Errorf("journal_mode = %q after Close, want delete", m)
	}
}

// TestClosedRunIsOneFile closes runs finished and not (a run that failed
// before Finish): each is left as the one file results.db, in the rollback
// journal mode, so that a read-only copy of it opens.
func TestClosedRunIsOneFile(t *testing.T) {
	for _, finish := range []bool{true, false} {
		t.Run("finished="+strconv.FormatBool(finish), func(t *testing.T) {
			r := writeThree(t, t.TempDir())
			if finish {
				if err := r.Finish(Status{State: StateInterrupted, Message: "stopped by a signal", ExitCode: 130}); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			checkSealed(t, r.Dir())
		})
	}
}

// readAll reads everything a report reads from the run in dir through
// OpenReadOnly.
func readAll(t *testing.T, dir string) *Run {
	t.Helper()
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Meta(); err != nil {
		t.Error(err)
	}
	if _, err := r.Events(); err != nil {
		t.Error(err)
	}
	if _, err := r.WorkloadEnds(); err != nil {
		t.Error(err)
	}
	if _, err := r.Phases(); err != nil {
		t.Error(err)
	}
	if _, err := r.Components(0); err != nil {
		t.Error(err)
	}
	return r
}

// TestOpenReadOnlyChangesNothing reads a closed run, in a writable
// directory and in a read-only one, and checks that no file of the
// directory changed and none was created (chmod does not stop root, who may
// run the tests: the hashes do).
func TestOpenReadOnlyChangesNothing(t *testing.T) {
	r := writeThree(t, t.TempDir())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	dir := r.Dir()
	for _, mode := range []fs.FileMode{0o755, 0o555} {
		if err := os.Chmod(filepath.Join(dir, DBName), mode&0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		before := testutil.TreeHash(t, dir)
		ro := readAll(t, dir)
		checkThree(t, ro)
		if err := ro.AddEvent(Event{Kind: "note", Message: "x"}); err == nil {
			t.Error("a read-only handle wrote an event")
		}
		if err := ro.AddCell(Cell{Index: 5, Name: "x"}); err == nil {
			t.Error("a read-only handle added a cell")
		}
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		checkSameTree(t, dir, before)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestOpenReadOnlyLiveAndKilled reads a run while its writer, another
// process, has it open, then after the writer was SIGKILLed: both read
// every committed interval, and neither changes the run's files (the live
// one reads through the writer's WAL index, the killed one from a private
// copy, removed on Close).
func TestOpenReadOnlyLiveAndKilled(t *testing.T) {
	cmd, dir := startWriter(t)
	live, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if live.snapshot != "" {
		t.Error("a live run was read from a copy")
	}
	checkThree(t, live)
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	killWriter(t, cmd)
	before := testutil.TreeHash(t, dir)
	if _, ok := before[DBName+"-wal"]; !ok {
		t.Fatalf("the killed run left no WAL; the test did not exercise recovery: %v", before)
	}
	killed := readAll(t, dir)
	snap := killed.snapshot
	if snap == "" {
		t.Error("a killed run was read in place")
	}
	checkThree(t, killed)
	if err := killed.Close(); err != nil {
		t.Fatal(err)
	}
	checkSameTree(t, dir, before)
	if _, err := os.Stat(snap); snap != "" && err == nil {
		t.Errorf("Close left the copy %s", snap)
	}
}
