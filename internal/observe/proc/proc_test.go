package proc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
)

// The fake trees in testdata, two seconds apart:
//
//	t1: 1 init ─┬─ 100 server ─── 101 worker ─── 102 helper (x) y
//	            └─ 200 other
//	t2: 1 init ─┬─ 100 server ─┬─ 101 worker          (102 exited, reaped by 101)
//	            │              └─ 103 fresh           (new)
//	            └─ 200 other                          (104 lived and died between
//	                                                   the samples, reaped by 100)
//
// CPU seconds in t2 − t1 (clock ticks of 10 ms):
//
//	100 own +20 ticks = 0.2, reaped +10 (104) = 0.1
//	101 own +120 = 1.2, reaped +80 (102's whole life) − 50 already counted = 0.3
//	103 new: 40 = 0.4
//
// = 2.2 s in 2 s = 1.1 cores. Storage bytes, likewise:
//
//	read:  100 +3000, 101 +4000, 103 600 = 7600 → 3800/s
//	write: 100 0, 101 +300 − 100 already counted for 102, 103 400 = 600 → 300/s
var (
	t0     = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	pageSz = float64(os.Getpagesize())
)

// fakeProc points a symlink at testdata/<tree> and returns it and a function
// that re-points it at another tree (a name in testdata or an absolute path).
func fakeProc(t *testing.T, tree string) (root string, swap func(tree string)) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "proc")
	swap = func(tree string) {
		t.Helper()
		target := tree
		if !filepath.IsAbs(tree) {
			var err error
			if target, err = filepath.Abs(filepath.Join("testdata", tree)); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.Remove(root)
		if err := os.Symlink(target, root); err != nil {
			t.Fatal(err)
		}
	}
	swap(tree)
	return root, swap
}

// copyTree copies testdata/<tree> to a writable directory.
func copyTree(t *testing.T, tree string) string {
	t.Helper()
	src, dst := filepath.Join("testdata", tree), filepath.Join(t.TempDir(), tree)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dst, strings.TrimPrefix(path, src))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// setStatField sets field i (0 = state, 1 = ppid, … 19 = starttime) of the
// fields after the command name in dir/<pid>/stat.
func setStatField(t *testing.T, dir string, pid, i int, value string) {
	t.Helper()
	path := filepath.Join(dir, strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	r := strings.LastIndex(s, ")")
	fields := strings.Fields(s[r+1:])
	fields[i] = value
	if err := os.WriteFile(path, []byte(s[:r+1]+" "+strings.Join(fields, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTreeSumsTheFakeTree(t *testing.T) {
	root, swap := fakeProc(t, "t1")
	tree, err := New(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Name() != "proc 100" || tree.PID() != 100 {
		t.Errorf("Name, PID = %q, %d", tree.Name(), tree.PID())
	}
	observetest.CheckPoints(t, observetest.Sample(t, tree, t0), []observe.Point{
		{Metric: observe.Processes, Value: 3},
		{Metric: observe.RSSBytes, Value: (1000 + 2000 + 500) * pageSz},
		{Metric: observe.Threads, Value: 2 + 4 + 1},
		{Metric: observe.OpenFDs, Value: 3 + 5 + 2},
	})
	swap("t2")
	observetest.CheckPoints(t, observetest.Sample(t, tree, t0.Add(2*time.Second)), []observe.Point{
		{Metric: observe.Processes, Value: 3},
		{Metric: observe.RSSBytes, Value: (1000 + 3000 + 100) * pageSz},
		{Metric: observe.Threads, Value: 2 + 4 + 1},
		{Metric: observe.OpenFDs, Value: 3 + 6 + 1},
		{Metric: observe.CPUCores, Value: 1.1},
		{Metric: observe.ReadBytesPerS, Value: 3800},
		{Metric: observe.WriteBytesPerS, Value: 300},
	})
}

func TestTreeOfALeaf(t *testing.T) {
	root, swap := fakeProc(t, "t1")
	tree, err := New(root, 101)
	if err != nil {
		t.Fatal(err)
	}
	observetest.Sample(t, tree, t0)
	swap("t2")
	// 101: own 1.2 s, reaped 0.8 s of which 102's 0.5 s was counted: 1.5 s.
	observetest.CheckPoints(t, observetest.Sample(t, tree, t0.Add(time.Second)), []observe.Point{
		{Metric: observe.Processes, Value: 1},
		{Metric: observe.RSSBytes, Value: 3000 * pageSz},
		{Metric: observe.Threads, Value: 4},
		{Metric: observe.OpenFDs, Value: 6},
		{Metric: observe.CPUCores, Value: 1.5},
		{Metric: observe.ReadBytesPerS, Value: 4000},
		{Metric: observe.WriteBytesPerS, Value: 200},
	})
}

func TestTreeLeavesOutWhatItCannotRead(t *testing.T) {
	root, swap := fakeProc(t, "t1")
	tree, err := New(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	observetest.Sample(t, tree, t0)
	dir := copyTree(t, "t2")
	for _, f := range []string{"103/io", "101/fd"} { // e.g. another user's process
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	// An unrelated process with a broken stat is none of our business.
	if err := os.WriteFile(filepath.Join(dir, "200", "stat"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	swap(dir)
	observetest.CheckPoints(t, observetest.Sample(t, tree, t0.Add(2*time.Second)), []observe.Point{
		{Metric: observe.Processes, Value: 3},
		{Metric: observe.RSSBytes, Value: 4100 * pageSz},
		{Metric: observe.Threads, Value: 7},
		{Metric: observe.CPUCores, Value: 1.1},
	})
}

func TestTreeFailsOnABrokenFileOfAMember(t *testing.T) {
	root, swap := fakeProc(t, "t1")
	tree, err := New(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	dir := copyTree(t, "t2")
	if err := os.WriteFile(filepath.Join(dir, "101", "io"), []byte("rchar: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	swap(dir)
	_, err = tree.Sample(context.Background(), t0)
	if err == nil || errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "cannot read /proc/101/io") {
		t.Errorf("Sample error = %v, want a read error for /proc/101/io", err)
	}
}

func TestTreeRootGone(t *testing.T) {
	for name, breakIt := range map[string]func(t *testing.T, dir string){
		"exited": func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "100")); err != nil {
				t.Fatal(err)
			}
		},
		"zombie":     func(t *testing.T, dir string) { setStatField(t, dir, 100, 0, "Z") },
		"pid reused": func(t *testing.T, dir string) { setStatField(t, dir, 100, 19, "9999") },
	} {
		t.Run(name, func(t *testing.T) {
			root, swap := fakeProc(t, "t1")
			tree, err := New(root, 100)
			if err != nil {
				t.Fatal(err)
			}
			observetest.Sample(t, tree, t0)
			dir := copyTree(t, "t2")
			breakIt(t, dir)
			swap(dir)
			_, err = tree.Sample(context.Background(), t0.Add(time.Second))
			if !errors.Is(err, ErrGone) || !errors.Is(err, observe.ErrGone) {
				t.Errorf("Sample error = %v, want one wrapping ErrGone", err)
			}
		})
	}
}

func TestNewWithoutTheProcess(t *testing.T) {
	root, _ := fakeProc(t, "t1")
	if _, err := New(root, 999); !errors.Is(err, ErrGone) {
		t.Errorf("New(999) error = %v, want ErrGone", err)
	}
	if _, err := New(filepath.Join(t.TempDir(), "none"), 1); err == nil || errors.Is(err, ErrGone) {
		t.Errorf("New on a missing /proc: error = %v, want a plain error", err)
	}
}

func TestTreeRootOnly(t *testing.T) {
	root, swap := fakeProc(t, "t1")
	tree, err := New(root, 100, RootOnly())
	if err != nil {
		t.Fatal(err)
	}
	observetest.Sample(t, tree, t0)
	swap("t2")
	// 100's own 0.2 s; not 104's 0.1 s it reaped, no children, no I/O.
	observetest.CheckPoints(t, observetest.Sample(t, tree, t0.Add(2*time.Second)), []observe.Point{
		{Metric: observe.Processes, Value: 1},
		{Metric: observe.RSSBytes, Value: 1000 * pageSz},
		{Metric: observe.Threads, Value: 2},
		{Metric: observe.OpenFDs, Value: 3},
		{Metric: observe.CPUCores, Value: 0.1},
	})
}
