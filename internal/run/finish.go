package run

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// Result is what a run leaves: its directory and its report, read back
// from the store (nil when the store could not be read).
type Result struct {
	Dir    string
	Report *view.Run
	// Written are the report files written into Dir (report.md,
	// report.html, summary.json, and a search's own): those a user can
	// open.
	Written []string
}

// Judge decides a run's final state from its read model.
type Judge func(*view.Run) (results.Status, error)

// Finisher is what a strategy adds to the end of a run: its own verdict
// after the run's.
type Finisher interface {
	Judge(rep *view.Run, status results.Status, err error) (results.Status, error)
}

// Finish reads the run back, decides its state with judge (then its SLO
// gates and read-back checks, then f's verdict when f is set), records
// it and writes the report files with files (Job.Files; nil writes
// none). When the store failed, it still writes what it can, and its
// error says so first.
func (r *Record) Finish(judge Judge, f Finisher, files func(dir string, rep *view.Run) ([]string, error)) (*Result, error) {
	defer leanGC()()
	res := &Result{Dir: r.Store.Dir()}
	rep, err := readback.Load(r.Store)
	if err != nil {
		if r.Err() != nil {
			return res, r.failure(nil, r.Err(), nil, []error{err})
		}
		return res, failed(err, "")
	}
	readback.Final(rep)
	status, runErr := judge(rep)
	status, runErr = judgeSLO(rep, status, runErr)
	status, runErr = judgeUnverified(rep, status, runErr)
	if f != nil {
		status, runErr = f.Judge(rep, status, runErr)
	} else { // a strategy with its own verdict judges the generator itself: a search looks for its limit
		status, runErr = judgeShortfall(rep, status, runErr)
	}
	finishErr := r.Store.Finish(status)
	rep.State, rep.Message, rep.Ended = status.State, status.Message, status.Ended
	res.Report = rep
	var others []error
	if files != nil {
		written, err := files(r.Store.Dir(), rep)
		if err != nil {
			others = append(others, err)
		}
		res.Written = written
	}
	if r.Err() != nil || finishErr != nil {
		return res, r.failure(rep, r.Err(), finishErr, others)
	}
	if len(others) > 0 {
		return res, failed(errors.Join(others...), "")
	}
	return res, runErr
}

// judgeRun maps what happened to a final status and, for a failed or
// interrupted run, an error with a hint.
func judgeRun(r *view.Run, interrupted bool, storeErr error) (results.Status, error) {
	now := time.Now()
	switch {
	case storeErr != nil:
		msg := "could not write every interval to the run store: " + storeErr.Error()
		return results.Status{State: "failed", Ended: now, Message: msg, ExitCode: ExitFailed},
			failed(errors.New(msg), "check free disk space in the output directory")
	case interrupted:
		return results.Status{State: "interrupted", Ended: now, Message: "stopped by a signal", ExitCode: ExitInterrupted},
			&Failure{Err: errors.New("run interrupted; the report covers what was measured"), Code: ExitInterrupted}
	}
	for _, s := range r.Workloads {
		if !s.AllFailed() {
			continue
		}
		msg := fmt.Sprintf("every request of workload %q failed (%s)", s.Workload.Name, firstError(s))
		if s.ErrorsTotal < s.RequestsTotal {
			msg = fmt.Sprintf("every request of workload %q in its steady-state window failed, %d of the run's %d succeeded outside it (%s)",
				s.Workload.Name, s.RequestsTotal-s.ErrorsTotal, s.RequestsTotal, firstError(s))
		}
		return results.Status{State: "failed", Ended: now, Message: msg, ExitCode: ExitFailed},
			failed(errors.New(msg), allFailedHint(s))
	}
	if msg, hint := failedSide(r.Workloads); msg != "" {
		return results.Status{State: "failed", Ended: now, Message: msg, ExitCode: ExitFailed}, failed(errors.New(msg), hint)
	}
	return results.Status{State: "completed", Ended: now, ExitCode: ExitOK}, nil
}

// JudgePlan is judgeRun for a plan: a read-back that lost data fails the
// run, then a failed cell (failed names them), after the store errors and
// an interrupt.
func JudgePlan(r *view.Run, interrupted bool, storeErr error, failedCells []string) (results.Status, error) {
	if status, err := judgeLost(r); err != nil && storeErr == nil && !interrupted && len(failedCells) == 0 {
		return status, err
	}
	if storeErr != nil || interrupted || len(failedCells) == 0 {
		return judgeRun(r, interrupted, storeErr)
	}
	msg := fmt.Sprintf("%s failed: %s", Plural(len(failedCells), "cell"), strings.Join(failedCells, "; "))
	return results.Status{State: results.StateFailed, Ended: time.Now(), Message: msg, ExitCode: ExitFailed},
		failed(errors.New(msg), "report.md says for each cell what failed; the components' output is under logs/ in the run directory")
}

// judgeShortfall fails a run that completed but in which the generator
// issued under half of a workload's arrivals due: its figures are the
// generator's, not the target's.
func judgeShortfall(r *view.Run, status results.Status, runErr error) (results.Status, error) {
	if runErr != nil || status.State != results.StateCompleted {
		return status, runErr
	}
	for _, s := range r.Workloads {
		why := analysis.Shortfall(s.Workload)
		if why == "" {
			continue
		}
		msg := why + ": the run measured the generator, not the target"
		return results.Status{State: results.StateFailed, Ended: time.Now(), Message: msg, ExitCode: ExitFailed},
			failed(errors.New(msg), "lower the rate, or make the load with more workers (--workers, perflab k8s run) or on a larger machine")
	}
	return status, runErr
}

// allFailedHint says what to check when every request of s failed, by the
// class most of them failed with: a refused connection and a 404 need
// different fixes.
func allFailedHint(s *analysis.Summary) string {
	top := topClass(s, allOps)
	return failedHint(top, sampleOf(s, top), s.Workload.Target)
}

// sampleOf is the sample message of class in s's operations, if any.
func sampleOf(s *analysis.Summary, class string) string {
	for _, op := range s.Ops {
		for _, e := range op.Errors {
			if e.Class == class && e.Sample != "" {
				return e.Sample
			}
		}
	}
	return ""
}

// failedHint is allFailedHint for requests to target that failed mostly
// with the class top, sample one of their messages.
func failedHint(top, sample, target string) string {
	if top == stats.Protocol.String() {
		return protocolHint(sample, target)
	}
	switch top {
	case stats.Status4xx.String():
		return fmt.Sprintf("%s answers, with a 4xx status: check the URL's path, the method, and the headers or credentials it needs", target)
	case stats.RateLimited.String():
		return fmt.Sprintf("%s answers, refusing every request for its rate (429): lower the rate, or raise its limit", target)
	case stats.Status5xx.String():
		return fmt.Sprintf("%s answers, but fails every request (5xx): its logs say why", target)
	case stats.TLS.String():
		return "the TLS handshake failed: trust the server's CA (--cacert, ca_file) or skip verification (--insecure), and check the certificate's name"
	case stats.StatusOther.String():
		return fmt.Sprintf("%s answers with a status the workload does not count as a success: set --expect-status (expect_status), "+
			"or follow its redirects (--follow-redirects, follow_redirects)", target)
	case stats.Timeout.String():
		return fmt.Sprintf("every request ran out of time: raise --timeout (the timeout param) if it is shorter than %s takes to answer; "+
			"if it is not, check that %s is up and reachable", target, target)
	case stats.DNS.String():
		return fmt.Sprintf("the host of %s does not resolve: check its name", target)
	}
	return fmt.Sprintf("check that %s is up and reachable from this machine", target)
}

// protocolHint says what to check when requests failed as protocol
// errors, by what the sample says: an answer cut short, an answer past a
// bound, or one that is not the protocol asked.
func protocolHint(sample, target string) string {
	switch {
	case strings.Contains(sample, "cut short"):
		return fmt.Sprintf("%s ends its answers before their end (%s): its logs, or a proxy in between, say why", target, sample)
	case strings.Contains(sample, "perflab's bound"):
		return fmt.Sprintf("%s answers past one of perflab's bounds on an answer (%s): README, \"HTTP: what counts as an answer\", lists them", target, sample)
	}
	return fmt.Sprintf("%s answers, but not in the protocol asked: check --proto (proto) and the URL's scheme", target)
}

// topClass is the error class most of the operations of s that keep
// selects failed with; "" when none failed.
func topClass(s *analysis.Summary, keep func(op string) bool) string {
	counts := map[string]int64{}
	top := ""
	for _, op := range s.Ops {
		if !keep(op.Name) {
			continue
		}
		for _, e := range op.Errors {
			counts[e.Class] += e.Count
			if top == "" || counts[e.Class] > counts[top] {
				top = e.Class
			}
		}
	}
	return top
}

func allOps(string) bool { return true }

func firstError(s *analysis.Summary) string { return errorsOf(s, allOps) }

// errorsOf lists the failures of the operations of s that keep selects.
func errorsOf(s *analysis.Summary, keep func(op string) bool) string {
	var parts []string
	for _, op := range s.Ops {
		if !keep(op.Name) {
			continue
		}
		for _, e := range op.Errors {
			parts = append(parts, fmt.Sprintf("%d × %s: %s", e.Count, e.Class, e.Sample))
		}
	}
	if len(parts) == 0 {
		return "no operation completed"
	}
	return strings.Join(parts, "; ")
}

// finishGC is the garbage collector's target (GOGC) while a run is read
// back and its report written, the load over: the heap may grow a quarter
// over what is live, not double. The report is where a plan's generator
// peaked (vm-vs-prometheus: 17 MB live under a goal of 35 MB, as
// PERFLAB_MEMPROFILE showed); the CPU the collector spends there measures
// nothing.
const finishGC = 25

// lean counts the Finish calls under way: the collector's target is one
// setting for the whole process, lowered by the first and put back by the
// last, so that two runs finishing at once cannot leave it at finishGC.
var lean struct {
	sync.Mutex
	n    int
	prev int // the target before the first
}

// leanGC sets the collector's target to finishGC, unless the user's GOGC
// is lower or off, until the returned function puts it back.
func leanGC() (restore func()) {
	lean.Lock()
	defer lean.Unlock()
	if lean.n == 0 {
		lean.prev = debug.SetGCPercent(finishGC)
		if lean.prev < finishGC { // lower, or off (-1)
			debug.SetGCPercent(lean.prev)
		}
	}
	lean.n++
	return func() {
		lean.Lock()
		defer lean.Unlock()
		if lean.n--; lean.n == 0 {
			debug.SetGCPercent(lean.prev)
		}
	}
}
