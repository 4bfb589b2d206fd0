package cli

import (
	"fmt"
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
func (e *env) events() *terminal {
	return &terminal{e: e, progress: report.NewProgress(e.stderr, e.tty), shown: map[string]time.Time{}, showed: map[string]int64{}}
}

func (t *terminal) Note(msg string)  { fmt.Fprintf(t.e.stderr, "perflab: %s\n", msg) }
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
	case t.e.tty:
		fmt.Fprintf(t.e.stderr, "\r\033[Kperflab: %s %d/%d", label, done, total)
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
	if t.e.tty && total > 0 {
		fmt.Fprintf(t.e.stderr, "\r\033[Kperflab: %s %d/%d\n", label, done, total)
	}
	delete(t.shown, label)
	delete(t.showed, label)
}
