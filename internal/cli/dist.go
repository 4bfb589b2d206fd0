package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of a coordinator.
const (
	startMargin  = 2 * time.Second // from a phase's announcement to its start: every worker must have read it
	followPoll   = 500 * time.Millisecond
	abortGrace   = 15 * time.Second // after an abort, beyond the workloads' grace, how long workers get to end
	skewWarning  = 50 * time.Millisecond
	localHelloIn = 30 * time.Second // how long local workers get to register
)

// distOptions are what a distributed run is told: how many workers, the
// shared store, and how to start them.
type distOptions struct {
	workers  int
	store    string // the shared store's URL; "" for a temporary directory (local workers only)
	runID    string // "" for a new one
	profiles string // --profile, for the workers
	launch   launcher
	helloIn  time.Duration // how long the workers get to register
}

// launcher starts the workers of a distributed run, and says which of
// them failed before they wrote their end.
type launcher interface {
	// start starts the workers of run, told to use the store at url.
	start(ctx context.Context, run shard.Run, url string, workers int) error
	// failed is the workers known to have failed, with why.
	failed() map[int]string
	// stop ends the workers once the run is over: they have been told to
	// exit; kill ends them at once.
	stop(kill bool)
	// logs says where a worker's output is, for a hint.
	logs(worker int) string
}

// coordinator is the side of a distributed run that announces phases,
// follows the workers' shards and merges them into the run store.
type coordinator struct {
	run    shard.Run
	n      int
	opts   distOptions
	temp   string // a temporary store directory, removed at the end
	hellos map[int]shard.Hello
	owned  bool   // the manifest is this coordinator's: it may tell the workers to stop
	phase  int    // the next phase's number
	broken string // why no phase is announced any more: a worker failed
	last   *phaseShards
}

// newRunID is a run id that is also a Kubernetes label value and name
// suffix: lower case, digits and dashes.
func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "r" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// startCoordinator opens the shared store, writes the run's manifest,
// starts the workers and waits until every one has registered.
func (e *env) startCoordinator(ctx context.Context, p *plan.Plan, rs *results.Run, opts distOptions) (*coordinator, error) {
	c := &coordinator{n: opts.workers, opts: opts}
	runDir, err := filepath.Abs(rs.Dir())
	if err != nil {
		return c, fmt.Errorf("cannot locate the run directory: %w", err)
	}
	if l, ok := opts.launch.(*localWorkers); ok {
		l.logDir = filepath.Join(runDir, "logs", "workers")
		if l.plan, err = filepath.Abs(p.File); err != nil {
			return c, fmt.Errorf("cannot locate the plan: %w", err)
		}
	}
	url, err := c.open(ctx)
	if err != nil {
		return c, err
	}
	if err := c.putManifest(ctx, p, rs, runDir); err != nil {
		return c, err
	}
	fmt.Fprintf(e.stderr, "perflab: run %s: %d workers, shared store %s\n", c.run.ID, c.n, c.run.Store.Where())
	if err := c.opts.launch.start(ctx, c.run, url, c.n); err != nil {
		return c, err
	}
	if err := c.awaitHellos(ctx, e); err != nil {
		return c, err
	}
	for _, i := range slices.Sorted(maps.Keys(c.hellos)) {
		h := c.hellos[i]
		if err := rs.AddEvent(results.Event{Kind: "worker", Message: fmt.Sprintf("worker %d registered: host %s, pid %d, %.0f cores, perflab %s",
			i, h.Host, h.PID, h.CoresAvailable, h.Version)}); err != nil {
			return c, err
		}
	}
	return c, nil
}

// open opens the shared store (a new temporary directory when none is
// given) under the run's id (a new one when none is given), and returns
// its URL for the workers.
func (c *coordinator) open(ctx context.Context) (string, error) {
	url := c.opts.store
	if url == "" {
		dir, err := os.MkdirTemp("", "perflab-store-")
		if err != nil {
			return "", fmt.Errorf("cannot make the workers' store: %w", err)
		}
		c.temp, url = dir, dir
	}
	store, err := shard.Open(url)
	if err != nil {
		return "", err
	}
	if s3, ok := store.(*shard.S3); ok {
		if err := s3.EnsureBucket(ctx); err != nil {
			return "", err
		}
	}
	if c.opts.runID == "" {
		c.opts.runID = newRunID()
	}
	c.run = shard.Run{Store: store, ID: c.opts.runID}
	return url, nil
}

// putManifest writes the run's manifest, refusing a run id the store has
// already.
func (c *coordinator) putManifest(ctx context.Context, p *plan.Plan, rs *results.Run, runDir string) error {
	text, err := os.ReadFile(p.File)
	if err != nil {
		return fmt.Errorf("cannot read the plan: %w", err)
	}
	_, found, err := c.run.Manifest(ctx)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("run %s exists in %s already: choose another run id", c.run.ID, c.run.Store.Where())
	}
	meta, err := rs.Meta()
	if err != nil {
		return err
	}
	err = c.run.PutManifest(ctx, shard.Manifest{Workers: c.n, Plan: string(text), Created: time.Now(), Version: Version,
		Repeat: p.Repeat, Profiles: c.opts.profiles, RunDir: runDir, Name: meta.Name, Meta: meta.Extra})
	c.owned = err == nil
	return err
}

// awaitHellos waits until every worker registered, one of them failed,
// or opts.helloIn passes.
func (c *coordinator) awaitHellos(ctx context.Context, e *env) error {
	deadline := time.Now().Add(c.opts.helloIn)
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		hs, err := c.run.Hellos(ctx)
		if err == nil && len(hs) >= c.n {
			c.hellos = hs
			hosts := map[string]int{}
			for _, h := range hs {
				hosts[h.Host]++
			}
			fmt.Fprintf(e.stderr, "perflab: %d workers registered on %s\n", len(hs), describeHosts(hosts))
			return nil
		}
		if bad := c.opts.launch.failed(); len(bad) > 0 {
			return fmt.Errorf("cannot start the workers: %s", describeFailed(bad))
		}
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("%d of %d workers registered within %v", len(hs), c.n, c.opts.helloIn))
		}
		select {
		case <-ctx.Done():
			return errors.New("stopped by a signal before every worker registered")
		case <-t.C:
		}
	}
}

func describeHosts(hosts map[string]int) string {
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, h := range names {
		parts[i] = fmt.Sprintf("%s (%d)", h, hosts[h])
	}
	return strings.Join(parts, ", ")
}

// describeFailed is "worker 1: exit status 2; worker 3: OOMKilled", by index.
func describeFailed(bad map[int]string) string {
	idx := slices.Sorted(maps.Keys(bad))
	parts := make([]string, len(idx))
	for i, w := range idx {
		parts[i] = fmt.Sprintf("worker %d: %s", w, bad[w])
	}
	return strings.Join(parts, "; ")
}

// close tells the workers the run is over (done, or aborted when it was
// stopped or broken), stops them and removes a temporary store.
func (c *coordinator) close(e *env, interrupted, kill bool) {
	if c.owned {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		var err error
		if interrupted || c.broken != "" {
			err = c.run.PutAbort(ctx, "the run ended early")
		} else {
			err = c.run.PutDone(ctx)
		}
		cancel()
		if err != nil {
			fmt.Fprintf(e.stderr, "perflab: warning: cannot tell the workers the run is over: %v\n", err)
		}
	}
	if c.opts.launch != nil {
		c.opts.launch.stop(kill)
	}
	if c.temp != "" && c.broken == "" {
		os.RemoveAll(c.temp)
	} else if c.temp != "" {
		fmt.Fprintf(e.stderr, "perflab: the workers' store is kept in %s (perflab merge --store %s --run-id %s)\n", c.temp, c.temp, c.run.ID)
	}
}

// workerRows records the workers' parts of a phase in the run store.
func (r *planRun) workerRows(cell int, profile string, ps *phaseShards) {
	for _, s := range ps.rows(cell, profile) {
		if err := r.store.AddShard(s); err != nil {
			r.sink.fail(err)
		}
	}
}
