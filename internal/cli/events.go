package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// terminal shows a run's events on stderr: lines prefixed "perflab:", the
// load's progress line (report.Progress), and the counts of a driver's
// preparation or cleanup, drawn in place on a terminal, else a line every
// two seconds and one at the end.
type terminal struct {
	e        *env // its stderr at the time of writing: a worker learns its scrubber after it started
	progress *report.Progress

	mu     sync.Mutex
	shown  map[string]time.Time // when a count was last shown, by label
	showed map[string]int64     // … and what it showed
}

var _ run.Events = (*terminal)(nil)

// events is the terminal view of a run's events for e.
// With --quiet it shows warnings and alerts alone: no progress, notes or
// counts.
func (e *env) events() *terminal {
	progress := report.NewProgress(e.stderr, e.tty)
	if e.quiet {
		progress = report.NewProgress(io.Discard, false)
	}
	progress.Width, progress.NoEscapes = e.width, e.noEscapes
	return &terminal{e: e, progress: progress, shown: map[string]time.Time{}, showed: map[string]int64{}}
}

func (t *terminal) Note(msg string) {
	if !t.e.quiet {
		fmt.Fprintf(t.e.stderr, "perflab: %s\n", msg)
	}
}
func (t *terminal) Warn(msg string)  { fmt.Fprintf(t.e.stderr, "perflab: warning: %s\n", msg) }
func (t *terminal) Alert(msg string) { fmt.Fprintf(t.e.stderr, "\nperflab: %s\n", msg) }

func (t *terminal) LoadBegin(name string, d time.Duration, rate float64) {
	t.progress.Begin(name, d, rate)
}
func (t *terminal) LoadInterval(w string, iv *stats.Interval) { t.progress.Interval(w, iv) }
func (t *terminal) LoadEnd()                                  { t.progress.End() }

// Count shows how far a count has come: in place on a terminal, else
// every two seconds and when it is done.
func (t *terminal) Count(label string, done, total int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	last, ok := t.showed[label]
	switch {
	case t.e.quiet:
	case t.e.tty:
		fmt.Fprintf(t.e.stderr, "%sperflab: %s %d/%d", t.e.lineStart(), label, done, total)
	case time.Since(t.shown[label]) >= 2*time.Second || done == total && (!ok || last != done):
		fmt.Fprintf(t.e.stderr, "perflab: %s %d/%d\n", label, done, total)
		t.shown[label], t.showed[label] = time.Now(), done
	}
}

// CountEnd finishes a count's line on a terminal; nothing was shown when
// there was nothing to count.
func (t *terminal) CountEnd(label string, done, total int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.e.tty && total > 0 && !t.e.quiet {
		fmt.Fprintf(t.e.stderr, "%sperflab: %s %d/%d\n", t.e.lineStart(), label, done, total)
	}
	delete(t.shown, label)
	delete(t.showed, label)
}

// lineStart goes back to the start of the terminal's line to draw over
// it: a carriage return, and the ANSI code erasing the line unless escape
// codes are off (a count only grows, so it covers what it overwrites).
func (e *env) lineStart() string {
	if e.noEscapes {
		return "\r"
	}
	return "\r\033[K"
}
