//go:build linux

package e2e

import (
	"bufio"
	"encoding/binary"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/testutil"
)

// readersLeave runs each reading command on the run directory dir and
// checks that it succeeds and leaves every file of dir as it was, creating
// none: not even for a moment (SQLite's -wal and -shm files of a database
// opened for writing come and go), which inotify sees.
func readersLeave(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"report", dir}, {"report", dir, "--format", "json"}, {"report", dir, "--format", "html"},
		{"size", dir}, {"size", dir, "--strategy", "krr"}, {"compare", dir, dir},
	} {
		before := testutil.TreeHash(t, dir)
		changes := watchDir(t, dir)
		r := run(t, args...)
		if r.code != 0 {
			t.Errorf("perflab %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		if ch := changes(); len(ch) > 0 {
			t.Errorf("perflab %s wrote in the run directory: %v", strings.Join(args, " "), ch)
		}
		if after := testutil.TreeHash(t, dir); !maps.Equal(before, after) {
			t.Errorf("perflab %s changed the run directory:\nbefore %v\nafter  %v", strings.Join(args, " "), before, after)
		}
	}
}

// watchDir starts watching the files of dir for writes (a file created,
// opened for writing, written, removed or renamed); the function it returns
// stops and lists them, as "name: event".
func watchDir(t *testing.T, dir string) func() []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		t.Fatalf("inotify: %v", err)
	}
	names := map[uint32]string{unix.IN_CREATE: "created", unix.IN_DELETE: "removed", unix.IN_MODIFY: "written",
		unix.IN_CLOSE_WRITE: "opened for writing", unix.IN_MOVED_FROM: "renamed", unix.IN_MOVED_TO: "renamed"}
	return func() []string {
		defer unix.Close(fd)
		var out []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				return out
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev, l := binary.NativeEndian.Uint32(buf[off+4:]), int(binary.NativeEndian.Uint32(buf[off+12:]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
				for bit, what := range names {
					if ev&bit != 0 {
						out = append(out, name+": "+what)
					}
				}
				off += unix.SizeofInotifyEvent + l
			}
		}
	}
}

// copyTree copies the files of dir into a new directory and makes the copy
// read-only (which does not stop root: readersLeave's hashes do).
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o444)
		if d.IsDir() {
			mode = 0o555
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	return dst
}

// TestFinishedRunIsOneFileReadersChangeNothing: a finished run is the one
// database file results.db in the rollback journal mode, which report,
// size and compare read, from the run directory and from a read-only copy,
// without changing or creating a file.
func TestFinishedRunIsOneFileReadersChangeNothing(t *testing.T) {
	t.Parallel()
	r := run(t, "demo", "--duration", "1s", "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("demo: exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	for _, name := range []string{results.DBName + "-wal", results.DBName + "-shm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("the finished run left %s", name)
		}
	}
	if m := journalMode(t, dir); m != "delete" {
		t.Errorf("journal_mode = %q, want delete", m)
	}
	t.Run("in place", func(t *testing.T) { readersLeave(t, dir) })
	t.Run("read-only copy", func(t *testing.T) { readersLeave(t, copyTree(t, dir)) })
	t.Run("report --write", func(t *testing.T) { reportWrite(t, dir) })
}

// reportWrite checks that `perflab report --write` on a copy of the run dir
// writes its report files again, and only those: results.db stays as it
// was, and no other file appears.
func reportWrite(t *testing.T, dir string) {
	d := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	before := testutil.TreeHash(t, d)
	if err := os.Remove(filepath.Join(d, "report.md")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "report", d, "--write"); r.code != 0 {
		t.Fatalf("report --write: exit %d\n%s", r.code, r.stderr)
	}
	after := testutil.TreeHash(t, d)
	if after[results.DBName] != before[results.DBName] {
		t.Error("report --write changed results.db")
	}
	if !slices.Equal(slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before))) {
		t.Errorf("report --write left the files %v, want %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	if r := run(t, "report", d, "--write", "--format", "json"); r.code != 2 {
		t.Errorf("report --write --format json: exit %d, want 2", r.code)
	}
}

// journalMode is the journal mode the results.db of dir is in, read from
// its header (bytes 18 and 19: 1 rollback journal, 2 WAL) so that nothing
// opens it.
func journalMode(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.DBName))
	if err != nil || len(b) < 20 {
		t.Fatalf("results.db: %v", err)
	}
	switch {
	case b[18] == 1 && b[19] == 1:
		return "delete"
	case b[18] == 2 && b[19] == 2:
		return "wal"
	}
	return "unknown"
}

// TestKilledRunReadsWithoutChange SIGKILLs a run mid-way: report, size and
// compare still read it, in place and from a read-only copy, and leave its
// files (the WAL with the last intervals among them) as they were.
func TestKilledRunReadsWithoutChange(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "1ms")
	cmd := exec.Command(perflab, "http", url, "--rate", "50/s", "--duration", "1h", "--out", t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dir := waitForProgress(t, stderr)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, results.DBName+"-wal")); err != nil {
		t.Fatalf("the killed run left no WAL (%v): the test does not exercise reading one", err)
	}
	for _, d := range []string{dir, copyTree(t, dir)} {
		readersLeave(t, d)
		r := run(t, "report", d, "--format", "json")
		s := parseSummary(t, []byte(r.stdout))
		if s.State != "running" || len(s.Workloads) != 1 || s.Workloads[0].Requests == 0 {
			t.Errorf("the killed run in %s reads as %q with %+v", d, s.State, s.Workloads)
		}
	}
}

// targetRequests is how many requests the built-in target at url answered,
// from its /metrics.
func targetRequests(t *testing.T, url string) int64 {
	t.Helper()
	n, err := servedRequests(url)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// servedRequests is how many requests the built-in target at url answered,
// from its /metrics.
func servedRequests(url string) (int64, error) {
	resp, err := http.Get(strings.TrimSuffix(url, "/") + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, m := range regexp.MustCompile(`(?m)^perflab_target_requests_total\{code="\d+"\} (\d+)`).FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n, nil
}

// TestFileSizeLimitStopsTheRun runs perflab http at 200/s for 60 s and, once
// the first interval is stored, sets its file-size limit (RLIMIT_FSIZE,
// with prlimit) to the present size of the run's WAL, so that the next
// write of the store fails with EFBIG (Go ignores SIGXFSZ). perflab must
// stop the load there, exit 1 saying that the store failed, why and how
// many intervals were kept, and those intervals must read back.
func TestFileSizeLimitStopsTheRun(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "1ms")
	const rate, seconds = 200, 60
	cmd, pipe, stderr, dir := startUntilFirstInterval(t, url, strconv.Itoa(rate)+"/s", strconv.Itoa(seconds)+"s")
	fi, err := os.Stat(filepath.Join(dir, results.DBName+"-wal"))
	if err != nil {
		t.Fatal(err)
	}
	lim := unix.Rlimit{Cur: uint64(fi.Size()), Max: uint64(fi.Size())}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		_ = cmd.Process.Kill()
		t.Skipf("cannot set the file-size limit of perflab: %v", err)
	}
	rest, _ := io.ReadAll(pipe)
	stderr.Write(rest)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1\n%s", err, stderr.String())
	}
	msg := stderr.String()
	for _, want := range []string{"perflab: stopping: the run store cannot write", "the run store failed and the load was stopped early",
		"reached the process's file-size limit", "read them with: perflab report " + dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if n := targetRequests(t, url); n > rate*seconds/4 {
		t.Errorf("the target answered %d requests of the %d scheduled: the load was not stopped", n, rate*seconds)
	}
	m := regexp.MustCompile(`(\d+) intervals? w(?:as|ere) kept in`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("stderr does not say how many intervals were kept:\n%s", msg)
	}
	kept, _ := strconv.Atoi(m[1])
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ivs, err := store.Intervals("http")
	if err != nil || len(ivs) != kept || kept == 0 {
		t.Errorf("%d intervals read back (%v); stderr says %d were kept", len(ivs), err, kept)
	}
	if s, err := store.Status(); err != nil || s.State != results.StateFailed {
		t.Errorf("status %+v, %v; want failed", s, err)
	}
}

// TestFullDiskLeavesNoEmptyReports (issue 16, item 14): once the run's
// files may not grow past 4 KiB (RLIMIT_FSIZE, as a full disk), the store
// fails, and so do the larger report files. Before, perflab left 0-byte
// report.md, report.html and summary.json and printed their paths. Now a
// report file is there whole or not at all, no temporary file is left,
// and perflab names only those it wrote.
func TestFullDiskLeavesNoEmptyReports(t *testing.T) {
	url := startTarget(t, "--latency", "1ms")
	cmd, pipe, stderr, dir := startUntilFirstInterval(t, url, "200/s", "60s")
	lim := unix.Rlimit{Cur: 4096, Max: 4096}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		_ = cmd.Process.Kill()
		t.Skipf("cannot set the file-size limit of perflab: %v", err)
	}
	rest, _ := io.ReadAll(pipe)
	stderr.Write(rest)
	if ee, ok := cmd.Wait().(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1\n%s", ee, stderr.String())
	}
	msg := stderr.String()
	for _, name := range []string{"report.md", "report.html", "summary.json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err == nil && fi.Size() == 0:
			t.Errorf("%s is empty", name)
		case err == nil && fi.Size() >= 4096: // could only have been cut at the limit
			t.Errorf("%s is cut short at the file-size limit (%d bytes)", name, fi.Size())
		case err != nil && strings.Contains(msg, filepath.Join(dir, name)):
			t.Errorf("perflab names %s, which it did not write:\n%s", name, msg)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// startUntilFirstInterval starts perflab http against url at rate for
// duration and reads its standard error until the progress line of its
// first interval: the run directory exists and the load runs. The rest of
// standard error is the caller's to read from pipe.
func startUntilFirstInterval(t *testing.T, url, rate, duration string) (*exec.Cmd, io.Reader, *strings.Builder, string) {
	t.Helper()
	cmd := exec.Command(perflab, "http", url, "--rate", rate, "--duration", duration, "--out", t.TempDir())
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	sc := bufio.NewScanner(pipe)
	var dir string
	for sc.Scan() {
		l := sc.Text()
		stderr.WriteString(l + "\n")
		if d, ok := strings.CutPrefix(l, "perflab: writing run to "); ok {
			dir = d
		}
		if dir != "" && strings.Contains(l, "p99") {
			return cmd, pipe, stderr, dir
		}
	}
	_ = cmd.Process.Kill()
	t.Fatalf("perflab ended before its first interval:\n%s", stderr.String())
	return nil, nil, nil, ""
}
