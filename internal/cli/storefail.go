package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// intervalWriter is where a run's intervals go as they close: the run
// store. Tests put one that fails in its place (env.intervals).
type intervalWriter interface {
	WriteInterval(workload string, iv *stats.Interval) error
}

// storeSink writes intervals to the run store as they close and is told of
// every other store write that failed. The first failure stops the load,
// as an interrupt would (no new arrivals, in-flight operations finish,
// components stop): load whose measurements cannot be kept is wasted, and
// may be what is filling the disk. It is reported at the end.
type storeSink struct {
	w     intervalWriter
	dir   string      // the run directory, to tell why a write failed
	halt  func(error) // called once, with the first failure
	mu    sync.Mutex
	first error
}

// storeHalted is the cause of a run's stop context ended by its store.
type storeHalted struct{ err error }

func (s *storeHalted) Error() string { return "the run store failed: " + s.err.Error() }
func (s *storeHalted) Unwrap() error { return s.err }

// newStoreSink returns the sink of a run writing to store, and the run's
// stop context: stop, also ended by the sink's first failure.
func (e *env) newStoreSink(store *results.Run, stop context.Context) (*storeSink, context.Context) {
	ctx, cancel := context.WithCancelCause(stop)
	var w intervalWriter = store
	if e.intervals != nil {
		w = e.intervals(store)
	}
	halt := func(err error) {
		if ctx.Err() == nil {
			fmt.Fprintf(e.stderr, "\nperflab: stopping: the run store cannot write (%v); no new requests, in-flight ones get their grace period\n", err)
		}
		cancel(&storeHalted{err: err})
	}
	return &storeSink{w: w, dir: store.Dir(), halt: halt}, ctx
}

func (s *storeSink) Interval(w string, iv *stats.Interval) {
	if err := s.w.WriteInterval(w, iv); err != nil {
		s.fail(err)
	}
}

// fail records a failed store write. The first one is told why, when
// storeDiagnosis can tell, at once: by the end of the run the files that
// could not grow may have shrunk again (Finish empties the WAL).
func (s *storeSink) fail(err error) {
	s.mu.Lock()
	first := s.first == nil
	if first {
		err = diagnosed(err, s.dir)
		s.first = err
	}
	s.mu.Unlock()
	if first && s.halt != nil {
		s.halt(err)
	}
}

func (s *storeSink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// stopped is the state and message of a cell or phase cut short by the
// end of stop: interrupted by a signal, or failed with the run store.
func stopped(stop context.Context) (state, message string) {
	var h *storeHalted
	if errors.As(context.Cause(stop), &h) {
		return results.StateFailed, "stopped: " + h.Error()
	}
	return results.StateInterrupted, "stopped by a signal"
}

// storeFailure is the error of a run whose store failed: storeErr during
// the run (the load was stopped) or finishErr when it was recorded. It says
// why, how many intervals the run directory kept and how to read them;
// others are the errors of the report step, which tried to write what it
// could.
func (e *env) storeFailure(store *results.Run, r *report.Run, storeErr, finishErr error, others []error) error {
	for _, err := range others {
		fmt.Fprintf(e.stderr, "perflab: also: %v\n", err)
	}
	what := "the run store failed and the load was stopped early"
	err := storeErr
	if err == nil {
		what, err = "the run store failed when the run ended", finishErr
	} else if finishErr != nil {
		fmt.Fprintf(e.stderr, "perflab: also: %v\n", finishErr)
	}
	if storeErr == nil {
		err = diagnosed(err, store.Dir())
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	kept := "the intervals kept could not be read back"
	if r != nil {
		n, noun := keptIntervals(r), "intervals were"
		if n == 1 {
			noun = "interval was"
		}
		kept = fmt.Sprintf("%d %s kept in %s", n, noun, store.Dir())
	}
	return &runError{err: fmt.Errorf("%s\n  %s; read them with: perflab report %s", msg, kept, store.Dir()), code: ExitFailed,
		hint: "free space where the run directory is (or raise the file-size limit, ulimit -f) before the next run"}
}

// keptIntervals is how many intervals the run store holds, over every
// workload.
func keptIntervals(r *report.Run) int {
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

// storeDiagnosis says, when it can tell, why files in dir cannot grow: the
// process's file-size limit reached by a file of the run store, or a full
// file system. SQLite reports both as a failed write.
func storeDiagnosis(dir string) string {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err == nil && lim.Cur != unix.RLIM_INFINITY {
		for _, name := range []string{results.DBName, results.DBName + "-wal", results.DBName + "-journal"} {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(dir, name), &st) == nil && uint64(st.Size) >= lim.Cur {
				return fmt.Sprintf("%s reached the process's file-size limit of %d bytes", name, lim.Cur)
			}
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fs.Bavail*uint64(fs.Bsize) < 1<<20 {
		return fmt.Sprintf("the file system of %s has %d bytes free", dir, fs.Bavail*uint64(fs.Bsize))
	}
	return ""
}
