package builtin

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time the test process has used.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

func TestBurnCPUUsesAtLeastItsCPU(t *testing.T) {
	for _, d := range []time.Duration{0, time.Millisecond, 30 * time.Millisecond} {
		before := processCPU(t)
		BurnCPU(d)
		if used := processCPU(t) - before; used < d {
			t.Errorf("BurnCPU(%v) used %v of CPU", d, used)
		}
	}
}

// TestCPUWorkPerRequest: each request to a target with CPUWork burns at
// least that much CPU before it answers.
func TestCPUWorkPerRequest(t *testing.T) {
	srv := startTarget(t, HTTPConfig{CPUWork: 5 * time.Millisecond}, nil)
	before := processCPU(t)
	const n = 10
	for range n {
		if code, _, _ := get(t, srv.URL+"/"); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
	}
	if used := processCPU(t) - before; used < n*5*time.Millisecond {
		t.Errorf("%d requests with 5ms of CPU work used %v of CPU", n, used)
	}
}
