package run

import (
	"fmt"

	"github.com/perflab/perflab/internal/plan"
)

// openFilesReserve are the files perflab keeps open besides its
// connections: the run store, the sampler's /proc files, logs, pipes.
const openFilesReserve = 64

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
