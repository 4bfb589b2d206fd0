package export

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// Bounds of a push.
const (
	PushTimeout = 10 * time.Second // one request to a target
	maxPush     = 10_000           // series in one request, about 1 MB of protobuf before compression
)

// sender sends one batch of series to a target.
type sender interface {
	send(ctx context.Context, batch []Series) error
	close()
}

// Options are what every target of a Set shares.
type Options struct {
	// Run is the run's id, the run directory's name: the label run.
	Run string
	// Scrub takes the run's secrets out of label values and errors; nil
	// keeps them as they are.
	Scrub func(string) string
	// Queue bounds each target's queue, in series; 0: DefaultQueue.
	Queue int
	// OnError is told each target's first failed push, once.
	OnError func(t Target, err error)
}

// Set exports a run's measurements to its targets. Its methods may be
// called from several goroutines; a nil Set exports nothing.
type Set struct {
	conv *converter
	exps []*exporter
}

// Start starts a sender for every target. An error says which target
// cannot be used; nothing is started then.
func Start(targets []Target, opts Options) (*Set, error) {
	s := &Set{conv: newConverter(opts.Run, opts.Scrub)}
	for _, t := range targets {
		s.conv.native = s.conv.native || t.NativeHistograms
	}
	for _, t := range targets {
		snd, err := newSender(t)
		if err != nil {
			s.Close(0)
			return nil, fmt.Errorf("cannot export to %s: %w", t.Shown(), err)
		}
		e := &exporter{target: t, q: newQueue(opts.Queue), snd: snd, scrub: s.conv.scrub, onError: opts.OnError,
			stop: make(chan struct{}), done: make(chan struct{})}
		e.ctx, e.cancel = context.WithCancel(context.Background())
		go e.loop()
		s.exps = append(s.exps, e)
	}
	return s, nil
}

func newSender(t Target) (sender, error) {
	if errs := t.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	if t.Kind == RemoteWrite {
		return newRemoteWrite(t), nil
	}
	return newOTLP(t)
}

// Interval exports a workload's interval as it closes.
func (s *Set) Interval(w Workload, iv *stats.Interval) {
	if s != nil && len(s.exps) > 0 {
		s.put(s.conv.interval(w, iv))
	}
}

// WorkloadEnd exports how many arrivals a workload whose load ran from
// start to at did not issue.
func (s *Set) WorkloadEnd(w Workload, start, at time.Time, unissued uint64) {
	if s != nil && len(s.exps) > 0 {
		s.put(s.conv.workloadEnd(w, start, at, unissued))
	}
}

// Samples exports the components' samples of a cell taken at t.
func (s *Set) Samples(cell string, t time.Time, byComponent map[string][]Sample) {
	if s != nil && len(s.exps) > 0 {
		s.put(s.conv.samples(cell, t, byComponent))
	}
}

func (s *Set) put(b []Series) {
	for _, e := range s.exps {
		e.q.put(b)
	}
}

// Close sends what is queued, within timeout, stops the senders and
// reports on each target.
func (s *Set) Close(timeout time.Duration) []Report {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, e := range s.exps {
		wg.Go(func() { e.close(ctx) })
	}
	wg.Wait()
	out := make([]Report, len(s.exps))
	for i, e := range s.exps {
		out[i] = e.report()
	}
	return out
}

// exporter pushes one target's queue every interval.
type exporter struct {
	target  Target
	q       *queue
	snd     sender
	scrub   func(string) string
	onError func(Target, error)

	ctx    context.Context // ends the pushes: Close's deadline
	cancel context.CancelFunc
	stop   chan struct{} // closed by close: the loop returns
	done   chan struct{} // closed when the loop has returned

	mu             sync.Mutex
	pushes, failed int
	sent, unsent   int64
	lastErr        string
}

func (e *exporter) loop() {
	defer close(e.done)
	t := time.NewTicker(e.target.interval())
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.flush(e.ctx)
		}
	}
}

// flush pushes everything queued, maxPush series at a time, until ctx
// ends.
func (e *exporter) flush(ctx context.Context) {
	for ctx.Err() == nil {
		b := e.q.take(maxPush)
		if len(b) == 0 {
			return
		}
		e.push(ctx, b)
	}
}

func (e *exporter) push(ctx context.Context, b []Series) {
	pctx, cancel := context.WithTimeout(ctx, PushTimeout)
	err := e.snd.send(pctx, b)
	cancel()
	e.mu.Lock()
	e.pushes++
	first := false
	if err != nil {
		first = e.failed == 0
		e.failed++
		e.lastErr = e.scrub(err.Error())
	} else {
		e.sent += int64(len(b))
	}
	e.mu.Unlock()
	if first && e.onError != nil {
		e.onError(e.target, fmt.Errorf("%s", e.scrub(err.Error())))
	}
}

// close stops the loop (ending a push in flight when ctx does), sends
// what is left within ctx and closes the sender.
func (e *exporter) close(ctx context.Context) {
	close(e.stop)
	stop := context.AfterFunc(ctx, e.cancel)
	<-e.done
	e.flush(ctx)
	stop()
	e.cancel()
	left, _ := e.q.counts()
	e.mu.Lock()
	e.unsent = int64(left)
	e.mu.Unlock()
	e.snd.close()
}
