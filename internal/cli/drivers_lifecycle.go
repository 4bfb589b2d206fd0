package cli

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
	cleanupTimeout = 2 * time.Minute // each driver's Cleanup
	verifyTimeout  = 2 * time.Minute // each driver's Verify, beyond the time it waits for data to show
)

// prepare runs Prepare of every workload whose driver has one, in plan
// order, before the profile's load, with a progress line. The first error
// ends it: the phase cannot run.
func (r *planRun) prepare(ctx context.Context, ws []phaseWorkload) error {
	for _, w := range ws {
		p, ok := w.eng.Driver.(driver.Preparer)
		if !ok {
			continue
		}
		start := time.Now()
		line := r.newProgressLine(fmt.Sprintf("preparing %s: %s objects", w.desc.Name, w.desc.Driver))
		err := p.Prepare(ctx, line.update)
		line.end()
		if err != nil {
			r.event("prepare", fmt.Sprintf("%s: %v", w.desc.Name, err))
			return fmt.Errorf("workload %s: %w", w.desc.Short, err)
		}
		r.event("prepare", fmt.Sprintf("%s: prepared %s %s objects in %v", w.desc.Name, line.count(), w.desc.Driver, time.Since(start).Round(time.Millisecond)))
	}
	return nil
}

// cleanup runs Cleanup of every workload whose driver has one, last
// first, each bounded by cleanupTimeout and cut short only by a second
// interrupt: after the load, whether it completed, failed or was
// interrupted.
func (r *planRun) cleanup(ws []phaseWorkload) {
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		c, ok := w.eng.Driver.(driver.Cleaner)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(r.kill, cleanupTimeout)
		start := time.Now()
		line := r.newProgressLine(fmt.Sprintf("cleaning up %s: %s objects", w.desc.Name, w.desc.Driver))
		err := c.Cleanup(ctx, line.update)
		line.end()
		cancel()
		if err != nil {
			r.event("cleanup", fmt.Sprintf("%s: %v", w.desc.Name, err))
			fmt.Fprintf(r.e.stderr, "perflab: warning: cannot clean up after workload %s: %s\n", w.desc.Name, err)
			continue
		}
		r.event("cleanup", fmt.Sprintf("%s: removed %s %s objects in %v", w.desc.Name, line.count(), w.desc.Driver, time.Since(start).Round(time.Millisecond)))
	}
}

// recordFacts stores what each workload's driver tells about it, once its
// load has ended.
func (r *planRun) recordFacts(ws []phaseWorkload) {
	for _, w := range ws {
		if d, ok := w.eng.Driver.(driver.Describer); ok {
			var facts []results.Fact
			for _, f := range d.Facts() {
				facts = append(facts, results.Fact{Name: f.Name, Value: f.Value})
			}
			r.addFacts(w.desc.Name, facts)
		}
	}
}

// readBack runs Verify of every workload whose driver has one, all at
// once, after the profile's load ended in state, each bounded by
// verifyTimeout plus the time its driver waits for data to show. A phase
// that did not complete is not read back; the facts say so.
func (r *planRun) readBack(ctx context.Context, ws []phaseWorkload, state string) {
	var wg sync.WaitGroup
	for _, w := range ws {
		v, ok := w.eng.Driver.(driver.Verifier)
		if !ok {
			continue
		}
		if state != results.StateCompleted {
			r.addFacts(w.desc.Name, []results.Fact{{Name: "read-back", Value: readBackSkipped(state)}})
			continue
		}
		note := ""
		if w.spec.VerifyWait > 0 {
			note = fmt.Sprintf(" (waiting up to %v for it to show)", w.spec.VerifyWait)
		}
		fmt.Fprintf(r.e.stderr, "perflab: read-back checks of %s%s\n", w.desc.Name, note)
		wg.Go(func() {
			vctx, cancel := context.WithTimeout(ctx, verifyTimeout+w.spec.VerifyWait)
			defer cancel()
			checks, err := v.Verify(vctx)
			r.recordChecks(w.desc.Name, checks, err)
		})
	}
	wg.Wait()
}

// resultCheck is a read-back check as the run store keeps it.
func resultCheck(c driver.Check) results.Check {
	return results.Check{Name: c.Name, Expected: c.Expected, Found: c.Found, Unit: c.Unit,
		Lost: c.State == driver.CheckLost, Note: c.Note, State: c.State, Late: c.Late,
		LateBy: c.LateBy, Reason: c.Reason}
}

// readBackSkipped is the read-back fact of a phase that did not complete
// (state), in one process or on a worker.
func readBackSkipped(state string) string {
	return "skipped: the profile " + map[string]string{results.StateFailed: "failed", results.StateInterrupted: "was interrupted"}[state]
}

// settledChecks are a driver's read-back checks as perflab records them,
// in one process or on a worker: when the driver could not check at all
// (err), one unverified check, "read-back", with the reason.
func settledChecks(checks []driver.Check, err error) []driver.Check {
	if err != nil {
		return []driver.Check{{Name: "read-back", State: driver.CheckUnverified, Reason: err.Error(),
			Note: "the driver could not read back anything"}}
	}
	return checks
}

// recordChecks stores a workload's read-back checks (settledChecks) and
// records an event. Unverified and late checks are said on the terminal
// as they come.
func (r *planRun) recordChecks(name string, checks []driver.Check, err error) {
	checks = settledChecks(checks, err)
	rows := make([]results.Check, len(checks))
	var parts []string
	for i, c := range checks {
		rows[i] = resultCheck(c)
		part := fmt.Sprintf("%s %s of %s", c.Name, figure(c.Found), figure(c.Expected))
		switch c.State {
		case driver.CheckLost:
			part += " LOST"
		case driver.CheckLate:
			part += fmt.Sprintf(" (%s late, the last %v after its write)", figure(c.Late), c.LateBy.Round(time.Millisecond))
		case driver.CheckUnverified:
			part += " UNVERIFIED: " + c.Reason
			fmt.Fprintf(r.e.stderr, "perflab: warning: cannot verify what %s wrote (%s): %s\n", name, c.Name, c.Reason)
		}
		parts = append(parts, part)
	}
	if err := r.store.AddChecks(name, rows); err != nil {
		r.sink.fail(err)
	}
	if len(parts) > 0 {
		r.event("verify", name+": "+strings.Join(parts, "; "))
	}
}

func (r *planRun) addFacts(workload string, facts []results.Fact) {
	if err := r.store.AddFacts(workload, facts); err != nil {
		r.sink.fail(err)
	}
}

// event records an event of the run.
func (r *planRun) event(kind, msg string) {
	if err := r.store.AddEvent(results.Event{Kind: kind, Message: msg}); err != nil {
		r.sink.fail(err)
	}
}

// progressLine shows how far a Prepare or Cleanup has come: in place on a
// terminal, else a line every two seconds and one at the end.
type progressLine struct {
	r           *planRun
	label       string
	mu          sync.Mutex
	done, total int64
	shown       time.Time
	shownDone   int64
}

func (r *planRun) newProgressLine(label string) *progressLine {
	return &progressLine{r: r, label: label, shownDone: -1}
}

func (p *progressLine) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	switch {
	case p.r.e.tty:
		fmt.Fprintf(p.r.e.stderr, "\r\033[Kperflab: %s %d/%d", p.label, done, total)
	case time.Since(p.shown) >= 2*time.Second || done == total && done != p.shownDone:
		fmt.Fprintf(p.r.e.stderr, "perflab: %s %d/%d\n", p.label, done, total)
		p.shown, p.shownDone = time.Now(), done
	}
}

// end finishes the line; nothing was shown when the driver had nothing to
// do.
func (p *progressLine) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.r.e.tty && p.total > 0 {
		fmt.Fprintf(p.r.e.stderr, "\r\033[Kperflab: %s %d/%d\n", p.label, p.done, p.total)
	}
}

// count is how far it came, for the event: "1000 of 1000".
func (p *progressLine) count() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%d of %d", p.done, p.total)
}
