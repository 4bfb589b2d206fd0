package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
)

// Bounds of the phases around a profile's load.
const (
	CleanupTimeout = 2 * time.Minute // each driver's Cleanup
	VerifyTimeout  = 2 * time.Minute // each driver's Verify, beyond the time it waits for data to show
)

// prepare runs Prepare of every workload whose driver has one, in plan
// order, before the profile's load, with a progress line. The first error
// ends it: the phase cannot run.
func (r *runner) prepare(ctx context.Context, ws []Workload) error {
	for _, w := range ws {
		p, ok := w.Eng.Driver.(driver.Preparer)
		if !ok {
			continue
		}
		start := time.Now()
		line := r.newCounter(fmt.Sprintf("preparing %s: %s objects", w.Desc.Name, w.Desc.Driver))
		err := p.Prepare(ctx, line.update)
		line.end()
		if err != nil {
			r.rec.Event("prepare", fmt.Sprintf("%s: %v", w.Desc.Name, err))
			return fmt.Errorf("workload %s: %w", w.Desc.Short, err)
		}
		r.rec.Event("prepare", fmt.Sprintf("%s: prepared %s %s objects in %v", w.Desc.Name, line.count(), w.Desc.Driver, time.Since(start).Round(time.Millisecond)))
	}
	return nil
}

// cleanup runs Cleanup of every workload whose driver has one, last
// first, each bounded by cleanupTimeout and cut short only by a second
// interrupt: after the load, whether it completed, failed or was
// interrupted.
func (r *runner) cleanup(ws []Workload) {
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		c, ok := w.Eng.Driver.(driver.Cleaner)
		if !ok {
			continue
		}
		start := time.Now()
		line := r.newCounter(fmt.Sprintf("cleaning up %s: %s objects", w.Desc.Name, w.Desc.Driver))
		err := CleanupOne(r.kill, c, line.update)
		line.end()
		if err != nil {
			r.rec.Event("cleanup", fmt.Sprintf("%s: %v", w.Desc.Name, err))
			r.events.Warn(fmt.Sprintf("cannot clean up after workload %s: %s", w.Desc.Name, err))
			continue
		}
		r.rec.Event("cleanup", fmt.Sprintf("%s: removed %s %s objects in %v", w.Desc.Name, line.count(), w.Desc.Driver, time.Since(start).Round(time.Millisecond)))
	}
}

// readBack runs Verify of every workload whose driver has one, all at
// once, after the profile's load ended in state, each bounded by
// verifyTimeout plus the time its driver waits for data to show. A phase
// that did not complete is not read back; the facts say so.
func (r *runner) readBack(ctx context.Context, ws []Workload, state string) {
	var wg sync.WaitGroup
	for _, w := range ws {
		v, ok := w.Eng.Driver.(driver.Verifier)
		if !ok {
			continue
		}
		if state != results.StateCompleted {
			r.rec.Facts(w.Desc.Name, []driver.Fact{{Name: "read-back", Value: ReadBackSkipped(state)}})
			continue
		}
		note := ""
		if w.Spec.VerifyWait > 0 {
			note = fmt.Sprintf(" (waiting up to %v for it to show)", w.Spec.VerifyWait)
		}
		r.events.Note(fmt.Sprintf("read-back checks of %s%s", w.Desc.Name, note))
		wg.Go(func() { r.rec.Checks(w.Desc.Name, Verify(ctx, w, v), nil) })
	}
	wg.Wait()
}

// Verify reads back what w's driver wrote, bounded by VerifyTimeout plus
// the time the driver waits for data to show: its checks as perflab
// records them (SettledChecks), in one process or on a worker.
func Verify(ctx context.Context, w Workload, v driver.Verifier) []driver.Check {
	vctx, cancel := context.WithTimeout(ctx, VerifyTimeout+w.Spec.VerifyWait)
	defer cancel()
	checks, err := v.Verify(vctx)
	return SettledChecks(checks, err)
}

// CleanupOne runs c's Cleanup, bounded by CleanupTimeout and cut short
// only by kill (a second interrupt), in one process or on a worker.
func CleanupOne(kill context.Context, c driver.Cleaner, progress func(done, total int64)) error {
	ctx, cancel := context.WithTimeout(kill, CleanupTimeout)
	defer cancel()
	return c.Cleanup(ctx, progress)
}

// ReadBackSkipped is the read-back fact of a phase that did not complete
// (state), in one process or on a worker.
func ReadBackSkipped(state string) string {
	return "skipped: the profile " + map[string]string{results.StateFailed: "failed", results.StateInterrupted: "was interrupted"}[state]
}

// SettledChecks are a driver's read-back checks as perflab records them,
// in one process or on a worker: when the driver could not check at all
// (err), one unverified check, "read-back", with the reason.
func SettledChecks(checks []driver.Check, err error) []driver.Check {
	if err != nil {
		return []driver.Check{{Name: "read-back", State: driver.CheckUnverified, Reason: err.Error(),
			Note: "the driver could not read back anything"}}
	}
	return checks
}

// recordChecks stores a workload's read-back checks (settledChecks) and
// records an event. Unverified and late checks are said on the terminal
// as they come.
func (r *Record) Checks(name string, checks []driver.Check, err error) {
	checks = SettledChecks(checks, err)
	var parts []string
	for _, c := range checks {
		part := fmt.Sprintf("%s %s of %s", c.Name, figure(c.Found), figure(c.Expected))
		switch c.State {
		case driver.CheckLost:
			part += " LOST"
		case driver.CheckLate:
			part += fmt.Sprintf(" (%s late, the last %v after its write)", figure(c.Late), c.LateBy.Round(time.Millisecond))
		case driver.CheckUnverified:
			part += " UNVERIFIED: " + c.Reason
			r.events.Warn(fmt.Sprintf("cannot verify what %s wrote (%s): %s", name, c.Name, c.Reason))
		}
		parts = append(parts, part)
	}
	if err := r.Store.AddChecks(name, checks); err != nil {
		r.Fail(err)
	}
	if len(parts) > 0 {
		r.Event("verify", name+": "+strings.Join(parts, "; "))
	}
}

// counter tells the run's Events how far a Prepare or Cleanup has come.
type counter struct {
	events      Events
	label       string
	mu          sync.Mutex
	done, total int64
}

func (r *runner) newCounter(label string) *counter { return &counter{events: r.events, label: label} }

func (p *counter) update(done, total int64) {
	p.mu.Lock()
	p.done, p.total = done, total
	p.mu.Unlock()
	p.events.Count(p.label, done, total)
}

// end ends the count.
func (p *counter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events.CountEnd(p.label, p.done, p.total)
}

// count is how far it came, for the event: "1000 of 1000".
func (p *counter) count() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%d of %d", p.done, p.total)
}
