package run

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// Version is perflab's version, stored with every run.
const Version = "0.1.0"

// IntervalWriter is where a run's intervals go as they close: the run
// store. Tests put one that fails in its place (Record.SetIntervals).
type IntervalWriter interface {
	WriteInterval(workload string, iv *stats.Interval) error
}

// Record is a run's store as the run writes it. Every write that fails is
// told to it (Fail); the first failure stops the load, as an interrupt
// would (no new arrivals, in-flight operations finish, components stop):
// load whose measurements cannot be kept is wasted, and may be what is
// filling the disk. It is reported at the end.
type Record struct {
	Store  *results.Run
	events Events
	w      IntervalWriter
	halt   context.CancelCauseFunc
	mu     sync.Mutex
	first  error
}

// Create creates a run directory under out, with meta completed by what
// every run records (perflab's version, the start, the host,
// GOMAXPROCS), and says where it is. scrub, when set, takes secrets out of
// everything the store keeps.
func Create(out string, meta results.Meta, scrub func(string) string, events Events) (*Record, error) {
	return create(meta, events, "check that --out names a writable directory", func(meta results.Meta) (*results.Run, error) {
		return results.CreateScrubbed(out, meta, scrub)
	})
}

// CreateAt is Create in the run directory dir itself, which must not
// exist or be empty (perflab run --run-dir).
func CreateAt(dir string, meta results.Meta, scrub func(string) string, events Events) (*Record, error) {
	return create(meta, events, "--run-dir names a directory of this run alone: one that does not exist, or is empty", func(meta results.Meta) (*results.Run, error) {
		return results.CreateScrubbedAt(dir, meta, scrub)
	})
}

// create completes meta, makes the run's store with makeStore (hint says
// what to check when it cannot) and says where it is.
func create(meta results.Meta, events Events, hint string, makeStore func(results.Meta) (*results.Run, error)) (*Record, error) {
	meta.Tool, meta.Started, meta.GoMaxProcs = "perflab "+Version, time.Now(), runtime.GOMAXPROCS(0)
	meta.Host, _ = os.Hostname()
	store, err := makeStore(meta)
	if err != nil {
		return nil, failed(err, hint)
	}
	events.Note("writing run to " + store.Dir())
	return &Record{Store: store, events: events, w: store}, nil
}

// SetIntervals makes w where the run's intervals go instead of its store.
func (r *Record) SetIntervals(w IntervalWriter) { r.w = w }

// Halting is stop, also ended by the store's first failure.
func (r *Record) Halting(stop context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(stop)
	r.halt = func(err error) {
		if ctx.Err() == nil {
			r.events.Alert(fmt.Sprintf("stopping: the run store cannot write (%v); no new requests, in-flight ones get their grace period", err))
		}
		cancel(err)
	}
	return ctx
}

// Interval writes a workload's interval to the store.
func (r *Record) Interval(workload string, iv *stats.Interval) {
	if err := r.w.WriteInterval(workload, iv); err != nil {
		r.Fail(err)
	}
}

// Fail records a failed store write. The first one is told why, when
// storeDiagnosis can tell, at once: by the end of the run the files that
// could not grow may have shrunk again (Finish empties the WAL).
func (r *Record) Fail(err error) {
	r.mu.Lock()
	first := r.first == nil
	if first {
		err = diagnosed(err, r.Store.Dir())
		r.first = err
	}
	r.mu.Unlock()
	if first && r.halt != nil {
		r.halt(&storeHalted{err: err})
	}
}

// Err is the store's first failure, if any.
func (r *Record) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// Event records an event of the run.
func (r *Record) Event(kind, msg string) {
	if err := r.Store.AddEvent(results.Event{Kind: kind, Message: msg}); err != nil {
		r.Fail(err)
	}
}

// Facts records what a driver told of a workload.
func (r *Record) Facts(workload string, facts []driver.Fact) {
	if err := r.Store.AddFacts(workload, facts); err != nil {
		r.Fail(err)
	}
}

// note and warn keep a message of the run as an event and show it.
func (r *Record) note(msg string) {
	r.events.Note(msg)
	r.Event("note", msg)
}

func (r *Record) warn(msg string) {
	r.events.Warn(msg)
	r.Event("error", msg)
}

// failure is the error of a run whose store failed: storeErr during the
// run (the load was stopped) or finishErr when it was recorded. It says
// why, how many intervals the run directory kept and how to read them;
// others are the errors of the report step, which tried to write what it
// could.
func (r *Record) failure(rep *view.Run, storeErr, finishErr error, others []error) error {
	what := "the run store failed and the load was stopped early"
	err := storeErr
	if err == nil {
		what, err = "the run store failed when the run ended", finishErr
	} else if finishErr != nil {
		others = append(others, finishErr)
	}
	if storeErr == nil {
		err = diagnosed(err, r.Store.Dir())
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	kept := "the intervals kept could not be read back"
	if rep != nil {
		n, noun := keptIntervals(rep), "intervals were"
		if n == 1 {
			noun = "interval was"
		}
		kept = fmt.Sprintf("%d %s kept in %s", n, noun, r.Store.Dir())
	}
	return &Failure{Err: fmt.Errorf("%s\n  %s; read them with: perflab report %s", msg, kept, r.Store.Dir()), Code: ExitFailed,
		Hint: "free space where the run directory is (or raise the file-size limit, ulimit -f) before the next run", Also: others}
}

// keptIntervals is how many intervals the run store holds, over every
// workload.
func keptIntervals(r *view.Run) int {
	n := 0
	for _, t := range r.Timelines {
		n += len(t)
	}
	return n
}

// diagnosed is err with storeDiagnosis of dir added, when it says anything.
func diagnosed(err error, dir string) error {
	if why := storeDiagnosis(dir); why != "" {
		return fmt.Errorf("%w (%s)", err, why)
	}
	return err
}

// Events are the run's.
func (r *Record) Events() Events { return r.events }

// OpenRecord is a Record of a run store created already.
func OpenRecord(store *results.Run, events Events) *Record {
	return &Record{Store: store, events: events, w: store}
}
