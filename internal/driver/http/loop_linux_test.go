package httpdriver

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// depthHost begins count operations, one after another, and keeps the
// deepest call stack an operation ended on.
type depthHost struct {
	count, begun, deepest int
	classes               stats.Counts
}

func (h *depthHost) Begin(int) (time.Time, bool) {
	if h.begun == h.count {
		return time.Time{}, false
	}
	h.begun++
	return time.Now(), true
}

func (h *depthHost) Done(_ int, r *driver.Result, _, _ time.Time) {
	h.classes[r.Class]++
	h.deepest = max(h.deepest, runtime.Callers(0, make([]uintptr, 4096)))
}

func (h *depthHost) Stopped() bool  { return h.begun == h.count }
func (h *depthHost) Now() time.Time { return time.Now() }

// TestLoopNestsNoOperations: operations that fail as they begin (no
// descriptor left for a socket) begin their next one in the next round,
// not within the last: the stack stays as deep however many fail. The
// limit on descriptors is the process's: the test lowers it in a child
// process of its own, where it starves no other test.
func TestLoopNestsNoOperations(t *testing.T) {
	if os.Getenv("PERFLAB_TEST_NO_FDS") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoopNestsNoOperations$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PERFLAB_TEST_NO_FDS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return
	}
	d := newDriver(t, Config{URL: "http://127.0.0.1:9/", Timeout: 5 * time.Second}) // no socket is ever made
	l, err := d.Loop([]int{0, 1})
	if err != nil || l == nil {
		t.Fatalf("no loop: %v", err)
	}
	defer l.Close()
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = 0 // no descriptor may be opened: socket(2) fails at once
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	h := &depthHost{count: 5000}
	l.Run(context.Background(), h)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if h.classes[stats.Connect] != 5000 {
		t.Fatalf("classes %v, want 5000 failed to connect", h.classes)
	}
	if h.deepest > 64 {
		t.Errorf("an operation ended %d calls deep", h.deepest)
	}
}
