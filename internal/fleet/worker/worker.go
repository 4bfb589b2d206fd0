package worker

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/k8s"
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

// Worker is one `perflab worker`: worker index of n of a distributed run.
// It registers in the shared store, runs its share of every phase the
// coordinator announces from the instant it names, writes its intervals
// and its end to the store, and ends when the coordinator says the run is
// done or aborted. It starts no component and observes nothing but itself.
type Worker struct {
	events     run.Events
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

// New is worker index of n (0: as the coordinator's manifest says) of
// run, told of a signal by stop (end the load, finish the phase) and kill
// (at once); it gives up when the coordinator says nothing new for wait.
func New(sr shard.Run, index, n int, stop, kill context.Context, wait time.Duration, events run.Events) *Worker {
	return &Worker{events: events, run: sr, index: index, n: n, stop: stop, kill: kill, wait: wait}
}

// Scrubber takes the plan's credentials out of text, once the worker has
// joined.
func (w *Worker) Scrubber() *secret.Scrubber { return w.scrub }

// Join waits for the coordinator's manifest, loads the plan it names (the
// file given, which must be the coordinator's, or else its text) and
// registers the worker.
func (w *Worker) Join(planPath string) error {
	m, err := w.manifest()
	if err != nil {
		return err
	}
	if w.n == 0 {
		w.n = m.Workers
	}
	if w.n != m.Workers || w.index >= w.n {
		return run.Invalid("this is worker %d of %d, but the coordinator of run %s runs %d workers", w.index, w.n, w.run.ID, m.Workers)
	}
	if w.p, err = workerPlan(planPath, m); err != nil {
		return err
	}
	w.scrub = registry.Scrubber(w.p)
	exe, err := os.Executable()
	if err != nil {
		return &run.Failure{Err: fmt.Errorf("cannot find perflab's own executable: %w", err), Code: run.ExitFailed}
	}
	w.b = plan.Builtins{Perflab: exe, RunDir: m.RunDir}
	w.host = hostName()
	cores, _ := self.CoresAvailable()
	h := shard.Hello{Index: w.index, Host: w.host, PID: os.Getpid(), CoresAvailable: cores, Version: run.Version, Time: time.Now()}
	if err := w.run.PutHello(w.stop, h); err != nil {
		return &run.Failure{Err: fmt.Errorf("cannot register worker %d: %w", w.index, err), Code: run.ExitFailed}
	}
	w.events.Note(fmt.Sprintf("worker %d of %d of run %s in %s", w.index, w.n, w.run.ID, w.run.Store.Where()))
	return nil
}

// hostName is how the worker names where it runs: in a Kubernetes Job,
// "POD on NODE" (the downward API's, k8s.EnvPodName; with hostNetwork its
// host name is the node's, the same for every worker there), else its host
// name.
func hostName() string {
	if pod := os.Getenv(k8s.EnvPodName); pod != "" {
		if node := os.Getenv(k8s.EnvNodeName); node != "" {
			return pod + " on " + node
		}
		return pod
	}
	host, _ := os.Hostname()
	return host
}

// manifest waits for the run's manifest, up to w.wait.
func (w *Worker) manifest() (shard.Manifest, error) {
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
func (w *Worker) poll(period time.Duration, what string, look func() (bool, error)) error {
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
				return &run.Failure{Err: fmt.Errorf("cannot read %s from the store for %v: %w", what, w.wait, last), Code: run.ExitFailed}
			}
			return &run.Failure{Err: fmt.Errorf("no word from the coordinator of run %s for %v (waiting for %s)", w.run.ID, w.wait, what),
				Hint: "the coordinator may have died; `perflab merge` rebuilds the run from the store", Code: run.ExitFailed}
		}
		select {
		case <-w.stop.Done():
			return &run.Failure{Err: errors.New("stopped by a signal"), Code: run.ExitInterrupted}
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
			return nil, &run.Failure{Err: fmt.Errorf("cannot write the plan: %w", err), Code: run.ExitFailed}
		}
		path = filepath.Join(dir, "plan.yaml")
		if err := os.WriteFile(path, []byte(m.Plan), 0o600); err != nil {
			return nil, &run.Failure{Err: fmt.Errorf("cannot write the plan: %w", err), Code: run.ExitFailed}
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, &run.Failure{Err: fmt.Errorf("cannot read the plan: %w", err), Code: run.ExitUsage}
	}
	if sha256.Sum256(text) != sha256.Sum256([]byte(m.Plan)) {
		return nil, &run.Failure{Err: fmt.Errorf("the plan %s is not the one the coordinator runs", path),
			Hint: "give every worker the coordinator's plan file, or no --plan to use the text the coordinator stored", Code: run.ExitUsage}
	}
	return run.LoadPlan(path, "")
}

// Loop runs every phase the coordinator announces, in order, until it
// says the run is done or aborted.
func (w *Worker) Loop() error {
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
					w.events.Note(fmt.Sprintf("worker %d: the coordinator aborted the run: %s", w.index, ab.Reason))
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
