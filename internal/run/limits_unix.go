//go:build unix

package run

import "golang.org/x/sys/unix"

// OpenFiles is how many files this process may open at once
// (RLIMIT_NOFILE: Go raises its soft limit to the hard one when it
// starts) and the hard limit; 0, 0 when the limit cannot be read.
func OpenFiles() (soft, hard uint64) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0
	}
	return lim.Cur, lim.Max
}

// ReserveFiles grows this process's table of file descriptors to hold n
// at once (at most as many as it may open) before the load starts. The
// kernel grows the table as descriptors are opened, doubling it, and in a
// process of several threads (every Go program) each growth waits for an
// RCU grace period: 10–20 ms on a 2-core VM, inside a socket(2) that holds
// the Go P throughout. Grown by the VUs' first dials, it stalled every other
// VU and the dispatcher: at 20,000/s one 13 ms stall left 260 arrivals due, each a new VU whose
// dials grew the table again, and 8 of 20 runs against nginx ended at
// vus.max 1000 with 468–1030 arrivals dropped. The table never
// shrinks: one growth before the load costs one grace period where it
// measures nothing. Best effort: a table that cannot grow now grows later,
// as it did before.
func ReserveFiles(n int) {
	if soft, _ := OpenFiles(); soft > 0 && uint64(n) > soft {
		n = int(soft)
	}
	if n < 1 {
		return
	}
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(null)
	// F_DUPFD takes the lowest free descriptor from n−1 up: the table
	// grows to hold it, and no open descriptor is touched.
	if high, err := unix.FcntlInt(uintptr(null), unix.F_DUPFD_CLOEXEC, n-1); err == nil {
		unix.Close(high)
	}
}
