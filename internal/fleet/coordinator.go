package fleet

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
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of a coordinator.
const (
	startMargin  = 2 * time.Second // from a phase's announcement to its start: every worker must have read it
	followPoll   = 500 * time.Millisecond
	abortGrace   = 15 * time.Second // after an abort, beyond the workloads' grace, how long workers get to end
	skewWarning  = 50 * time.Millisecond
	LocalHelloIn = 30 * time.Second // how long local workers get to register
)

// Options are what a distributed run is told: how many workers, the
// shared store, and how to start them.
type Options struct {
	Workers  int
	Store    string // the shared store's URL; "" for a temporary directory (local workers only)
	RunID    string // "" for a new one
	Profiles string // --profile, for the workers
	Launch   Launcher
	HelloIn  time.Duration // how long the workers get to register
}

// Launcher starts the workers of a distributed run, and says which of
// them failed before they wrote their end.
type Launcher interface {
	// Start starts the workers of run, told to use the store at url.
	Start(ctx context.Context, run shard.Run, url string, workers int) error
	// Failed is the workers known to have failed, with why.
	Failed() map[int]string
	// Stop ends the workers once the run is over: they have been told to
	// exit; kill ends them at once.
	Stop(kill bool)
	// Logs says where a worker's output is, for a hint.
	Logs(worker int) string
}

// Coordinator is the side of a distributed run that announces phases,
// follows the workers' shards and merges them into the run store.
type Coordinator struct {
	events run.Events
	run    shard.Run
	n      int
	opts   Options
	temp   string // a temporary store directory, removed at the end
	hellos map[int]shard.Hello
	owned  bool   // the manifest is this coordinator's: it may tell the workers to stop
	phase  int    // the next phase's number
	broken string // why no phase is announced any more: a worker failed
	// storeErr is why the last read of the shared store failed, failing
	// since storeSince; nil when it succeeded.
	storeErr   error
	storeSince time.Time
	last       *phaseShards
}

// NewRunID is a run id that is also a Kubernetes label value and name
// suffix: lower case, digits and dashes.
func NewRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "r" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

var _ run.Load = (*Coordinator)(nil)

// New is the coordinator of a distributed run made as opts
// says.
func New(opts Options) *Coordinator { return &Coordinator{n: opts.Workers, opts: opts} }

// Open opens the shared store, writes the run's manifest, starts the
// workers and waits until every one has registered. When it fails, no
// phase runs.
func (c *Coordinator) Open(ctx context.Context, rec *run.Record, p *plan.Plan) error {
	c.events = rec.Events()
	if err := c.open(ctx, rec, p); err != nil {
		c.broken = "the workers: " + run.OneLine(err.Error())
		return err
	}
	return nil
}

func (c *Coordinator) open(ctx context.Context, rec *run.Record, p *plan.Plan) error {
	rs := rec.Store
	runDir, err := filepath.Abs(rs.Dir())
	if err != nil {
		return fmt.Errorf("cannot locate the run directory: %w", err)
	}
	if l, ok := c.opts.Launch.(*Local); ok {
		l.logDir = filepath.Join(runDir, "logs", "workers")
		if l.plan, err = filepath.Abs(p.File); err != nil {
			return fmt.Errorf("cannot locate the plan: %w", err)
		}
	}
	url, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	if err := c.putManifest(ctx, p, rs, runDir); err != nil {
		return err
	}
	c.events.Note(fmt.Sprintf("run %s: %d workers, shared store %s", c.run.ID, c.n, c.run.Store.Where()))
	if err := c.opts.Launch.Start(ctx, c.run, url, c.n); err != nil {
		return err
	}
	if err := c.awaitHellos(ctx); err != nil {
		return err
	}
	for _, i := range slices.Sorted(maps.Keys(c.hellos)) {
		h := c.hellos[i]
		if err := rs.AddEvent(results.Event{Kind: "worker", Message: fmt.Sprintf("worker %d registered: host %s, pid %d, %.0f cores, perflab %s",
			i, h.Host, h.PID, h.CoresAvailable, h.Version)}); err != nil {
			return err
		}
	}
	return nil
}

// Broken says why no phase runs any more: a worker failed.
func (c *Coordinator) Broken() string { return c.broken }

// openStore opens the shared store (a new temporary directory when none is
// given) under the run's id (a new one when none is given), and returns
// its URL for the workers.
func (c *Coordinator) openStore(ctx context.Context) (string, error) {
	url := c.opts.Store
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
	if c.opts.RunID == "" {
		c.opts.RunID = NewRunID()
	}
	c.run = shard.Run{Store: store, ID: c.opts.RunID}
	return url, nil
}

// putManifest writes the run's manifest, refusing a run id the store has
// already.
func (c *Coordinator) putManifest(ctx context.Context, p *plan.Plan, rs *results.Run, runDir string) error {
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
	err = c.run.PutManifest(ctx, shard.Manifest{Workers: c.n, Plan: string(text), Created: time.Now(), Version: run.Version,
		Repeat: p.Repeat, Profiles: c.opts.Profiles, RunDir: runDir, Name: meta.Name, Meta: meta.Extra})
	c.owned = err == nil
	return err
}

// awaitHellos waits until every worker registered, one of them failed,
// or opts.HelloIn passes.
func (c *Coordinator) awaitHellos(ctx context.Context) error {
	deadline := time.Now().Add(c.opts.HelloIn)
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
			c.events.Note(fmt.Sprintf("%d workers registered on %s", len(hs), describeHosts(hosts)))
			return nil
		}
		if bad := c.opts.Launch.Failed(); len(bad) > 0 {
			return fmt.Errorf("cannot start the workers: %s", describeFailed(bad))
		}
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("%d of %d workers registered within %v", len(hs), c.n, c.opts.HelloIn))
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

// Close tells the workers the run is over (done, or aborted when it was
// stopped or broken), stops them and removes a temporary store.
func (c *Coordinator) Close(interrupted, kill bool) {
	if c.owned {
		ctx, cancel := context.WithTimeout(context.Background(), shard.StoreTimeout)
		var err error
		if interrupted || c.broken != "" {
			err = c.run.PutAbort(ctx, "the run ended early")
		} else {
			err = c.run.PutDone(ctx)
		}
		cancel()
		if err != nil {
			c.events.Warn(fmt.Sprintf("cannot tell the workers the run is over: %v", err))
		}
	}
	if c.opts.Launch != nil {
		c.opts.Launch.Stop(kill)
	}
	if c.temp != "" && c.broken == "" {
		os.RemoveAll(c.temp)
	} else if c.temp != "" {
		c.events.Note(fmt.Sprintf("the workers' store is kept in %s (perflab merge --store %s --run-id %s)", c.temp, c.temp, c.run.ID))
	}
}
