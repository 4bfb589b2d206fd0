package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/observe/self"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of a worker's conversation with its coordinator.
const (
	workerPoll  = 200 * time.Millisecond // how often a worker looks for the next phase
	abortPoll   = 500 * time.Millisecond // … and, during a phase, for an abort
	uploadEvery = 2 * time.Second        // how often it writes its intervals
	workerWait  = time.Hour              // how long it waits for the coordinator's next word (a preparation may be long)
)

// worker is one `perflab worker`: worker index of n of a distributed run.
type worker struct {
	e          *env
	run        shard.Run
	index, n   int
	p          *plan.Plan
	b          plan.Builtins
	host       string
	stop, kill context.Context
	wait       time.Duration
	// scrub takes the plan's credentials out of what the worker writes to
	// the shared store and prints (see scrubber).
	scrub *secret.Scrubber
}

// workerCmd is `perflab worker`: one worker of a distributed run. It
// registers in the shared store, runs its share of every phase the
// coordinator announces from the instant it names, writes its intervals
// and its end to the store, and exits when the coordinator says the run is
// done or aborted. It starts no component and observes nothing but itself.
func (e *env) workerCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("worker", e)
	storeURL := fs.String("store", "", "the shared store: s3://BUCKET/PREFIX?endpoint=URL or a directory (default $PERFLAB_STORE)")
	runID := fs.String("run-id", "", "the run's id in the store (default $PERFLAB_RUN_ID)")
	index := fs.Int("index", -1, "this worker's index, from 0 (default $JOB_COMPLETION_INDEX)")
	workers := fs.Int("workers", 0, "how many workers the run has (default $PERFLAB_WORKERS, else the coordinator's manifest)")
	planPath := fs.String("plan", "", "the plan file (default: the plan text the coordinator stored; the files it names must then be absolute)")
	wait := fs.Duration("wait", workerWait, "give up when the coordinator says nothing new for this long")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab worker --store URL --run-id ID [--index I] [--workers N] [--plan FILE] [--wait 1h]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) > 0 {
		return usageErrorf("perflab worker takes no arguments, got %q", pos)
	}
	*storeURL, *runID = orEnv(*storeURL, "PERFLAB_STORE"), orEnv(*runID, "PERFLAB_RUN_ID")
	var problems []string
	if *index < 0 {
		*index, problems = envInt("JOB_COMPLETION_INDEX", "--index", problems)
	}
	if *workers == 0 && os.Getenv("PERFLAB_WORKERS") != "" {
		*workers, problems = envInt("PERFLAB_WORKERS", "--workers", problems)
	}
	problems = append(problems, workerProblems(*storeURL, *runID, *index, *workers, *wait)...)
	if len(problems) > 0 {
		return usageErrorf("perflab worker: %s", strings.Join(problems, "; "))
	}
	store, err := shard.Open(*storeURL)
	if err != nil {
		return usageErrorf("%v", err)
	}
	stop, kill, release := e.signals(ctx)
	defer release()
	w := &worker{e: e, run: shard.Run{Store: store, ID: *runID}, index: *index, n: *workers, stop: stop, kill: kill, wait: *wait}
	if err := w.join(*planPath); err != nil {
		return err
	}
	return w.loop()
}

// orEnv is v, or the environment variable name when v is empty.
func orEnv(v, name string) string {
	if v == "" {
		return os.Getenv(name)
	}
	return v
}

// envInt reads a whole number from the environment variable name, which
// stands in for flag; a problem is added when it is missing or invalid.
func envInt(name, flag string, problems []string) (int, []string) {
	v := os.Getenv(name)
	if v == "" {
		return -1, append(problems, fmt.Sprintf("give %s or set %s", flag, name))
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1, append(problems, fmt.Sprintf("%s=%q is not a whole number", name, v))
	}
	return n, problems
}

func workerProblems(store, runID string, index, workers int, wait time.Duration) []string {
	var out []string
	if store == "" {
		out = append(out, "give --store or set PERFLAB_STORE")
	}
	if runID == "" {
		out = append(out, "give --run-id or set PERFLAB_RUN_ID")
	}
	if workers < 0 {
		out = append(out, fmt.Sprintf("--workers %d must be >= 1", workers))
	}
	if workers > 0 && index >= workers {
		out = append(out, fmt.Sprintf("index %d is not one of the %d workers (0 to %d)", index, workers, workers-1))
	}
	if wait <= 0 {
		out = append(out, fmt.Sprintf("--wait %v must be > 0", wait))
	}
	return out
}

// join waits for the coordinator's manifest, loads the plan it names (the
// file given, which must be the coordinator's, or else its text) and
// registers the worker.
func (w *worker) join(planPath string) error {
	m, err := w.manifest()
	if err != nil {
		return err
	}
	if w.n == 0 {
		w.n = m.Workers
	}
	if w.n != m.Workers || w.index >= w.n {
		return usageErrorf("this is worker %d of %d, but the coordinator of run %s runs %d workers", w.index, w.n, w.run.ID, m.Workers)
	}
	if w.p, err = workerPlan(planPath, m); err != nil {
		return err
	}
	w.scrub = registry.Scrubber(w.p)
	w.e.useScrubber(w.scrub)
	exe, err := os.Executable()
	if err != nil {
		return &runError{err: fmt.Errorf("cannot find perflab's own executable: %w", err), code: ExitFailed}
	}
	w.b = plan.Builtins{Perflab: exe, RunDir: m.RunDir}
	w.host, _ = os.Hostname()
	cores, _ := self.CoresAvailable()
	h := shard.Hello{Index: w.index, Host: w.host, PID: os.Getpid(), CoresAvailable: cores, Version: Version, Time: time.Now()}
	if err := w.run.PutHello(w.stop, h); err != nil {
		return &runError{err: fmt.Errorf("cannot register worker %d: %w", w.index, err), code: ExitFailed}
	}
	fmt.Fprintf(w.e.stderr, "perflab: worker %d of %d of run %s in %s\n", w.index, w.n, w.run.ID, w.run.Store.Where())
	return nil
}

// manifest waits for the run's manifest, up to w.wait.
func (w *worker) manifest() (shard.Manifest, error) {
	var m shard.Manifest
	err := w.poll(workerPoll, "the coordinator's manifest", func() (bool, error) {
		var found bool
		var err error
		m, found, err = w.run.Manifest(w.stop)
		return found, err
	})
	return m, err
}

// poll calls look every period until it is done, w.wait passes, or a
// signal stops the worker. A store that cannot be read fails only once it
// has failed for w.wait.
func (w *worker) poll(period time.Duration, what string, look func() (bool, error)) error {
	deadline := time.Now().Add(w.wait)
	t := time.NewTicker(period)
	defer t.Stop()
	var last error
	for {
		done, err := look()
		if done && err == nil {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return &runError{err: fmt.Errorf("cannot read %s from the store for %v: %w", what, w.wait, last), code: ExitFailed}
			}
			return &runError{err: fmt.Errorf("no word from the coordinator of run %s for %v (waiting for %s)", w.run.ID, w.wait, what),
				hint: "the coordinator may have died; `perflab merge` rebuilds the run from the store", code: ExitFailed}
		}
		select {
		case <-w.stop.Done():
			return &runError{err: errors.New("stopped by a signal"), code: ExitInterrupted}
		case <-t.C:
		}
	}
}

// workerPlan loads the plan at path, after checking that it is the one
// the coordinator runs; without a path, the coordinator's text.
func workerPlan(path string, m shard.Manifest) (*plan.Plan, error) {
	if path == "" {
		dir, err := os.MkdirTemp("", "perflab-worker-")
		if err != nil {
			return nil, &runError{err: fmt.Errorf("cannot write the plan: %w", err), code: ExitFailed}
		}
		path = filepath.Join(dir, "plan.yaml")
		if err := os.WriteFile(path, []byte(m.Plan), 0o600); err != nil {
			return nil, &runError{err: fmt.Errorf("cannot write the plan: %w", err), code: ExitFailed}
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, &runError{err: fmt.Errorf("cannot read the plan: %w", err), code: ExitUsage}
	}
	if sha256.Sum256(text) != sha256.Sum256([]byte(m.Plan)) {
		return nil, &runError{err: fmt.Errorf("the plan %s is not the one the coordinator runs", path),
			hint: "give every worker the coordinator's plan file, or no --plan to use the text the coordinator stored", code: ExitUsage}
	}
	return run.LoadPlan(path, "")
}

// loop runs every phase the coordinator announces, in order, until it
// says the run is done or aborted.
func (w *worker) loop() error {
	for k := 0; ; k++ {
		var a shard.Announcement
		var over bool
		// An announced phase runs even after an abort (its load stops at
		// once): the coordinator waits for its end.
		err := w.poll(workerPoll, fmt.Sprintf("phase %d", k), func() (bool, error) {
			found, err := false, error(nil)
			if a, found, err = w.run.Announcement(w.stop, k); err != nil || found {
				return found, err
			}
			if ab, found, err := w.run.Aborted(w.stop); err != nil || found {
				if found {
					fmt.Fprintf(w.e.stderr, "perflab: worker %d: the coordinator aborted the run: %s\n", w.index, ab.Reason)
				}
				over = found
				return found, err
			}
			over, err = w.run.Done(w.stop)
			return over, err
		})
		if err != nil || over {
			return err
		}
		if err := w.phase(a); err != nil {
			return err
		}
	}
}
