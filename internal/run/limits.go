package run

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/plan"
)

// openFilesReserve are the files perflab keeps open besides its
// connections: the run store, the sampler's /proc files, logs, pipes.
const openFilesReserve = 64

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

// connectionProblem says, when conns connections held at once (one per
// VU) and perflab's own files need more files than this process may
// open, what to do; "" when they fit. what names the setting ("--concurrency
// 1000000").
func connectionProblem(what string, conns int) string {
	soft, hard := OpenFiles()
	need := uint64(conns) + openFilesReserve
	if soft == 0 || need <= soft {
		return ""
	}
	return fmt.Sprintf("%s needs about %d open files (a connection per VU, and perflab's own), and this process may open %d "+
		"(ulimit -n; the hard limit is %d): lower it, or raise the limit (ulimit -n up to the hard limit; as root ulimit -Hn, "+
		"LimitNOFILE in a systemd unit, nofile in /etc/security/limits.conf) and run again", what, need, soft, hard)
}

// OpenFileProblems lists the profiles of p whose workloads may hold, at
// once, more connections than a process may open, when workers processes
// share the load (1 for one process).
func OpenFileProblems(p *plan.Plan, workers int) []error {
	workers = max(workers, 1)
	var out []error
	for _, pr := range p.Profiles {
		conns := 0
		for _, w := range pr.Workloads {
			conns += maxVUs(w)
		}
		share := (conns + workers - 1) / workers
		what := fmt.Sprintf("profile %s: its workloads' %d VUs at most (concurrency and vus.max)", pr.Name, conns)
		if f := vusFlag(pr); f != "" {
			what = fmt.Sprintf("%s %d", f, conns)
		}
		if workers > 1 {
			what += fmt.Sprintf(", %d a worker,", share)
		}
		if why := connectionProblem(what, share); why != "" {
			out = append(out, plan.ErrorAt(p.File, pr.Pos("name"), "%s", why))
		}
	}
	return out
}

// vusFlag is the flag that set the VUs of a profile of one workload, in a
// plan built from a command line: --concurrency or --vus-max.
func vusFlag(pr plan.Profile) string {
	if len(pr.Workloads) != 1 {
		return ""
	}
	w := pr.Workloads[0]
	if w.Model == plan.Closed {
		return w.Pos("concurrency").Flag
	}
	return w.Pos("vus.max").Flag
}

// maxVUs is the most VUs a workload may run at once: its concurrency at
// its highest (closed model), its vus.max (open model).
func maxVUs(w plan.Workload) int {
	if w.Model != plan.Closed {
		return w.VUs.Max
	}
	n := max(w.Concurrency, w.StartConcurrency)
	for _, s := range w.Stages {
		n = max(n, s.Concurrency)
	}
	return n
}
