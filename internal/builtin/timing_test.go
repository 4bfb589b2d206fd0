package builtin

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAnswers is an answerClock for tests: it records every deadline a
// target waits for, as an offset from its start, and returns at once. With
// advance its time moves to each deadline, as if the wait had run; without,
// it stands still, so that every request arrives at the same instant.
type fakeAnswers struct {
	advance bool
	base    time.Time
	mu      sync.Mutex
	at      time.Duration // the time, as an offset from base
	waits   []time.Duration
}

func newFakeAnswers(advance bool) *fakeAnswers {
	return &fakeAnswers{advance: advance, base: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (f *fakeAnswers) now() time.Time { return f.base.Add(f.elapsed()) }
func (f *fakeAnswers) waiter() waiter { return f }
func (f *fakeAnswers) close()         {}

func (f *fakeAnswers) until(ctx context.Context, t time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := t.Sub(f.base)
	f.waits = append(f.waits, d)
	if f.advance && d > f.at {
		f.at = d
	}
	return ctx.Err() == nil
}

func (f *fakeAnswers) elapsed() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at
}

// deadlines returns the deadlines waited for so far, in order.
func (f *fakeAnswers) deadlines() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.waits)
}

// timedRecorder is a ResponseWriter that stamps the headers and every
// write of an event stream with the time of the handler's fake clock.
type timedRecorder struct {
	clock    *fakeAnswers
	header   http.Header
	code     int
	headerAt time.Duration
	events   []sseEvent
}

func newTimedRecorder(c *fakeAnswers) *timedRecorder {
	return &timedRecorder{clock: c, header: http.Header{}}
}

func (r *timedRecorder) Header() http.Header { return r.header }
func (r *timedRecorder) Flush()              {}

func (r *timedRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code, r.headerAt = code, r.clock.elapsed()
	}
}

// Write takes one event per write, as the provider sends them.
func (r *timedRecorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if len(b) > 0 {
		data := strings.TrimSuffix(strings.TrimPrefix(string(b), "data: "), "\n\n")
		r.events = append(r.events, sseEvent{r.clock.elapsed(), data})
	}
	return len(b), nil
}

var _ http.Flusher = (*timedRecorder)(nil)

// TestFineClockWaits: the real clock waits at least until the deadline,
// and gives up at once when its context is done. (How closely it keeps
// time is package clock's business, measured by its benchmarks.)
func TestFineClockWaits(t *testing.T) {
	w := fineClock{}.waiter()
	defer w.close()
	deadline := time.Now().Add(3 * time.Millisecond)
	if !w.until(context.Background(), deadline) || time.Now().Before(deadline) {
		t.Error("until returned before its deadline")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w.until(ctx, time.Now().Add(time.Hour)) {
		t.Error("until reported a done context as live")
	}
}
