//go:build unix

package run

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// fdSize is how many descriptors this process's table holds now (FDSize).
func fdSize(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "FDSize:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("FDSize %q: %v", v, err)
			}
			return n
		}
	}
	t.Skip("no FDSize in /proc/self/status")
	return 0
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// roomFor returns a descriptor count the table does not hold yet and the
// process may open, or skips.
func roomFor(t *testing.T) int {
	n := 4 * fdSize(t)
	if soft, _ := OpenFiles(); soft > 0 && uint64(n) > soft {
		t.Skipf("the open-files limit %d leaves no room to grow the table of %d", soft, n/4)
	}
	return n
}

func TestReserveFilesGrowsTheTableAndKeepsNoDescriptor(t *testing.T) {
	n, open := roomFor(t), openFDs(t)
	ReserveFiles(n)
	if got := fdSize(t); got < n {
		t.Errorf("the table holds %d descriptors after ReserveFiles(%d)", got, n)
	}
	if got := openFDs(t); got != open {
		t.Errorf("%d descriptors open after ReserveFiles, %d before", got, open)
	}
	// Beyond the limit: up to it, not an error. A lower limit for this,
	// so that the table keeps room to grow for the other tests.
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = uint64(2 * n)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim) })
	ReserveFiles(2*n + 1000)
	if got := fdSize(t); got < 2*n {
		t.Errorf("the table holds %d descriptors after a reservation beyond the limit of %d", got, 2*n)
	}
	if got := openFDs(t); got != open {
		t.Errorf("%d descriptors open after a reservation beyond the limit, %d before", got, open)
	}
}

type nop struct{}

func (nop) Do(_ context.Context, _ int, r *driver.Result) { r.Op = "op" }

func TestRunEnginesReservesDescriptorsForEveryVU(t *testing.T) {
	n := roomFor(t)
	open := engine.Workload{Name: "open", Model: engine.Open, Rate: pacer.Constant(1, time.Millisecond), VUsMax: n / 2, Driver: nop{}}
	closed := engine.Workload{Name: "closed", Model: engine.Closed, Driver: nop{},
		Conc: &pacer.Concurrency{Start: 1, Stages: []pacer.Stage{{Duration: time.Millisecond, Target: float64(n / 2)}}}}
	_, errs := RunEngines(context.Background(), context.Background(), []Workload{{Eng: open}, {Eng: closed}},
		engine.SinkFunc(func(string, *stats.Interval) {}))
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := fdSize(t); got < n+openFilesReserve {
		t.Errorf("the table holds %d descriptors after a phase of %d VUs at most", got, n)
	}
}
