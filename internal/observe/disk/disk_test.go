package disk

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

func diskBytes(t *testing.T, u *Usage) float64 {
	t.Helper()
	points, err := u.Sample(context.Background(), time.Now())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if len(points) != 1 || points[0].Metric != observe.DiskBytes {
		t.Fatalf("points %v, want one %s", points, observe.DiskBytes)
	}
	return points[0].Value
}

func write(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte{'x'}, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// du asks GNU du for the same figure, when it is there.
func du(t *testing.T, dirs ...string) (float64, bool) {
	t.Helper()
	out, err := exec.Command("du", append([]string{"-s", "-c", "-B1"}, dirs...)...).Output()
	if err != nil {
		return 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	v, err := strconv.ParseFloat(strings.Fields(lines[len(lines)-1])[0], 64)
	return v, err == nil
}

// layout builds a data directory with a 1 MiB file, two more hard links to
// it, a sparse 1 GiB file with one 4 KiB block written, and a symbolic link
// to an 8 MiB file outside. It returns the directory.
func layout(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	write(t, filepath.Join(dir, "chunks", "000001"), 1<<20)
	for _, link := range []string{"chunks/000001.link", "wal/000001"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(dir, "chunks", "000001"), filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{'y'}, 4096), 512<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(base, "outside", "big"), 8<<20)
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUsageCountsLikeDu(t *testing.T) {
	dir := layout(t)
	u := New(dir)
	if u.Name() != "disk "+dir {
		t.Errorf("Name = %q", u.Name())
	}
	got := diskBytes(t, u)
	// 1 MiB once, a block or so of the sparse file, directories: far from
	// the 3 MiB of links, the 1 GiB of length or the 8 MiB behind the link.
	if got < 1<<20 || got > 1<<20+256<<10 {
		t.Errorf("disk bytes = %v, want 1 MiB plus a little", got)
	}
	want, ok := du(t, dir)
	t.Logf("disk bytes %v, du %v (du there: %v)", got, want, ok)
	if ok && got != want {
		t.Errorf("disk bytes = %v, du says %v", got, want)
	}
}

func TestUsageOfSeveralDirectories(t *testing.T) {
	a, b := layout(t), layout(t)
	both := diskBytes(t, New(a, b))
	if want := diskBytes(t, New(a)) + diskBytes(t, New(b)); both != want {
		t.Errorf("two directories = %v, want the sum %v", both, want)
	}
	if want, ok := du(t, a, b); ok && both != want {
		t.Errorf("two directories = %v, du says %v", both, want)
	}
	// Listed twice or nested: counted once, whichever comes first.
	one := diskBytes(t, New(a))
	for _, dirs := range [][]string{{a, a}, {a, filepath.Join(a, "chunks")}, {filepath.Join(a, "chunks"), a}} {
		if got := diskBytes(t, New(dirs...)); got != one {
			t.Errorf("%v = %v, want %v", dirs, got, one)
		}
	}
	// A listed directory that is a symbolic link is followed.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	if got := diskBytes(t, New(link)); got != one {
		t.Errorf("through a link = %v, want %v", got, one)
	}
}

func TestUsageOfADirectoryCreatedLater(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	u := New(dir)
	if got := diskBytes(t, u); got != 0 {
		t.Errorf("missing directory = %v, want 0", got)
	}
	write(t, filepath.Join(dir, "f"), 64<<10)
	if got := diskBytes(t, u); got < 64<<10 {
		t.Errorf("after creation = %v, want at least 64 KiB", got)
	}
}

// Files created and removed while the walk runs are not errors.
func TestUsageWhileFilesComeAndGo(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			sub := filepath.Join(dir, fmt.Sprintf("block-%d", i%4))
			_ = os.RemoveAll(sub)
			_ = os.MkdirAll(sub, 0o755)
			for j := range 8 {
				_ = os.WriteFile(filepath.Join(sub, strconv.Itoa(j)), []byte("chunk"), 0o644)
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	u := New(dir)
	for range 200 {
		if _, err := u.Sample(context.Background(), time.Now()); err != nil {
			t.Fatalf("Sample: %v", err)
		}
	}
}

func TestUsageStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	for i := range 2048 {
		write(t, filepath.Join(dir, strconv.Itoa(i)), 1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(dir).Sample(ctx, time.Now()); err == nil {
		t.Error("Sample with a cancelled context: no error")
	}
}

// TestObserver: a component without data directories has no disk source;
// one with them has a Usage of them.
func TestObserver(t *testing.T) {
	if s := (Observer{}).Source(observe.Component{Name: "a", PID: 1}); s != nil {
		t.Errorf("source of a component without data directories: %v", s.Name())
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), 4096)
	s := (Observer{}).Source(observe.Component{Name: "b", PID: 1, DataDirs: []string{dir}})
	u, ok := s.(*Usage)
	if !ok || u.Name() != "disk "+dir || diskBytes(t, u) < 4096 {
		t.Errorf("source %#v, want a Usage of %s", s, dir)
	}
}
