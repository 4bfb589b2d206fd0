package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// job is a run of one or more workloads, one after the other.
type job struct {
	name      string
	command   string // as typed, with secrets masked
	out       string // parent directory of the run directory
	warmup    time.Duration
	jsonOut   bool // print summary.json to stdout instead of the table
	workloads []plannedWorkload
	// observed are components sampled while the workloads run, with the
	// generator, every sampleEvery; a zero sampleEvery samples nothing.
	observed    []observed
	sampleEvery time.Duration
	slo         []string // SLO gates judged on every workload
}

type plannedWorkload struct {
	eng  engine.Workload
	desc results.Workload
}

// createRun creates a run directory under out, with meta completed by
// what every run records (perflab's version, the start, the host,
// GOMAXPROCS), and says where it is.
func (e *env) createRun(out string, meta results.Meta) (*results.Run, error) {
	meta.Tool, meta.Started, meta.GoMaxProcs = "perflab "+Version, time.Now(), runtime.GOMAXPROCS(0)
	meta.Host, _ = os.Hostname()
	var scrub func(string) string
	if e.scrub != nil {
		scrub = e.scrub.String
	}
	store, err := results.CreateScrubbed(out, meta, scrub)
	if err != nil {
		return nil, &runError{err: err, hint: "check that --out names a writable directory", code: ExitFailed}
	}
	fmt.Fprintf(e.stderr, "perflab: writing run to %s\n", store.Dir())
	return store, nil
}

// execute runs j, writes its run directory and reports, and says where they
// are. The error, if any, carries the exit code.
func (e *env) execute(ctx context.Context, j job) error {
	store, err := e.createRun(j.out, results.Meta{Name: j.name, Command: j.command, Extra: readback.WithSLO(nil, gateSpecs(nil, j.slo))})
	if err != nil {
		return err
	}
	defer store.Close()
	stop, kill, release := e.signals(ctx)
	defer release()
	sink, stop := e.newStoreSink(store, stop)
	stopSampling := func() {}
	if j.sampleEvery > 0 {
		sm, err := e.startSampling(store, 0, j.sampleEvery, append(j.observed, generator(0)), sink)
		if err != nil {
			sink.fail(err)
		} else {
			stopSampling = sm.stop
		}
	}
	progress := report.NewProgress(e.stderr, e.tty)
	for _, pw := range j.workloads {
		if stop.Err() != nil {
			break
		}
		if err := store.AddWorkload(pw.desc); err != nil {
			sink.fail(err)
			break
		}
		progress.Begin(pw.eng.Name, pw.eng.Duration(), pw.desc.Rate)
		sum, err := engine.Run(stop, kill, pw.eng, engine.SinkFunc(func(w string, iv *stats.Interval) {
			sink.Interval(w, iv)
			progress.Interval(w, iv)
		}))
		progress.End()
		if c, ok := pw.eng.Driver.(driver.Closer); ok {
			c.Close()
		}
		if err != nil {
			stopSampling()
			return &runError{err: err, code: ExitFailed}
		}
		if err := store.EndWorkload(pw.eng.Name, endOf(sum, j.warmup, "the user")); err != nil {
			sink.fail(err)
		}
	}
	stopSampling()
	return e.finish(store, sink, j.jsonOut, func(r *report.Run) (results.Status, error) {
		return judgeRun(r, stop.Err() != nil, sink.err())
	})
}

// endOf is how a workload ended, with its window: the engine's, or from the
// end of a warm-up set by whom (the user, the plan) to the end of load.
func endOf(sum engine.Summary, warmup time.Duration, by string) results.WorkloadEnd {
	w := sum.Window
	if warmup > 0 {
		w = engine.Window{Start: sum.Start.Add(warmup), End: sum.LoadEnd, Rule: fmt.Sprintf("warm-up of %v set by %s, to the end of load", warmup, by)}
	}
	return results.WorkloadEnd{Start: sum.Start, LoadEnd: sum.LoadEnd, End: sum.End, Scheduled: sum.Scheduled,
		Dropped: sum.Dropped, Unissued: sum.Unissued, MaxVUs: sum.MaxVUs, Interrupted: sum.Interrupted,
		WindowStart: w.Start, WindowEnd: w.End, WindowRule: w.Rule}
}

// finish decides the run's state with judge, records it, writes the
// reports and prints the summary (as JSON with jsonOut). When the store
// failed (sink), it still writes what it can, and its error says so first.
func (e *env) finish(store *results.Run, sink *storeSink, jsonOut bool, judge func(*report.Run) (results.Status, error)) error {
	r, err := readback.Load(store)
	if err != nil {
		if sink.err() != nil {
			return e.storeFailure(store, nil, sink.err(), nil, []error{err})
		}
		return &runError{err: err, code: ExitFailed}
	}
	status, runErr := judge(r)
	status, runErr = judgeSLO(r, status, runErr)
	status, runErr = judgeUnverified(r, status, runErr)
	finishErr := store.Finish(status)
	r.State, r.Message, r.Ended = status.State, status.Message, status.Ended
	var others []error
	if err := readback.WriteReports(store, r); err != nil {
		others = append(others, err)
	}
	if jsonOut {
		err = report.JSON(e.stdout, r)
	} else {
		err = report.Terminal(e.stdout, r)
	}
	if err != nil {
		others = append(others, err)
	}
	fmt.Fprintf(e.stderr, "run directory: %s\nreport:        %s (and report.html)\nsummary:       %s\n",
		store.Dir(), store.Path("report.md"), store.Path("summary.json"))
	if sink.err() != nil || finishErr != nil {
		return e.storeFailure(store, r, sink.err(), finishErr, others)
	}
	if len(others) > 0 {
		return &runError{err: errors.Join(others...), code: ExitFailed}
	}
	return runErr
}

// judgeRun maps what happened to a final status and, for a failed or
// interrupted run, an error with a hint.
func judgeRun(r *report.Run, interrupted bool, storeErr error) (results.Status, error) {
	now := time.Now()
	switch {
	case storeErr != nil:
		msg := "could not write every interval to the run store: " + storeErr.Error()
		return results.Status{State: "failed", Ended: now, Message: msg, ExitCode: ExitFailed},
			&runError{err: errors.New(msg), hint: "check free disk space in the output directory", code: ExitFailed}
	case interrupted:
		return results.Status{State: "interrupted", Ended: now, Message: "stopped by a signal", ExitCode: ExitInterrupted},
			&runError{err: errors.New("run interrupted; the report covers what was measured"), code: ExitInterrupted}
	}
	for _, s := range r.Workloads {
		if !s.AllFailed() {
			continue
		}
		msg := fmt.Sprintf("every request of workload %q failed (%s)", s.Workload.Name, firstError(s))
		return results.Status{State: "failed", Ended: now, Message: msg, ExitCode: ExitFailed},
			&runError{err: errors.New(msg), hint: allFailedHint(s), code: ExitFailed}
	}
	return results.Status{State: "completed", Ended: now, ExitCode: ExitOK}, nil
}

// allFailedHint says what to check when every request of s failed, by the
// class most of them failed with: a refused connection and a 404 need
// different fixes.
func allFailedHint(s *analysis.Summary) string {
	counts := map[string]int64{}
	top := ""
	for _, op := range s.Ops {
		for _, e := range op.Errors {
			counts[e.Class] += e.Count
			if top == "" || counts[e.Class] > counts[top] {
				top = e.Class
			}
		}
	}
	switch top {
	case stats.Status4xx.String():
		return fmt.Sprintf("%s answers, with a 4xx status: check the URL's path, the method, and the headers or credentials it needs", s.Workload.Target)
	case stats.RateLimited.String():
		return fmt.Sprintf("%s answers, refusing every request for its rate (429): lower the rate, or raise its limit", s.Workload.Target)
	case stats.Status5xx.String():
		return fmt.Sprintf("%s answers, but fails every request (5xx): its logs say why", s.Workload.Target)
	case stats.TLS.String():
		return "the TLS handshake failed: trust the server's CA (--cacert, ca_file) or skip verification (--insecure), and check the certificate's name"
	case stats.Protocol.String():
		return fmt.Sprintf("%s answers, but not in the protocol asked: check --proto (proto) and the URL's scheme", s.Workload.Target)
	}
	return fmt.Sprintf("check that %s is up and reachable from this machine", s.Workload.Target)
}

func firstError(s *analysis.Summary) string {
	var parts []string
	for _, op := range s.Ops {
		for _, e := range op.Errors {
			parts = append(parts, fmt.Sprintf("%d × %s: %s", e.Count, e.Class, e.Sample))
		}
	}
	if len(parts) == 0 {
		return "no operation completed"
	}
	return strings.Join(parts, "; ")
}
