//go:build linux

package httpdriver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// The closed model's HTTP/1.1 path: an event loop over raw non-blocking
// sockets and epoll, serving many VUs from one goroutine, each VU with its
// own keep-alive connection as on the goroutine path (conn.go). A
// goroutine per VU costs, per request, a read that fails with EAGAIN
// before the goroutine parks, and a park and a wake through Go's poller:
// the loop writes a request, waits for its connection's edge and reads
// the answer once, as wrk does (BENCHMARKS.md). It serves plain http://
// with a connection per VU and no redirects to follow; TLS and redirects
// go through the goroutine path, HTTP/2 and shared pools through net/http.
//
// It reports what the other paths report, the same way (driver.go), with
// the same parser and rules (h1.go): every behavioural test of the
// package runs on it too.

var _ driver.Looper = (*Driver)(nil)

// loops tells whether the driver's closed model may run through loops.
func (d *Driver) loops() bool {
	return d.h1 != nil && !d.h1.first.tls && d.h1.port != 0 && d.follow == 0
}

// Loop returns an event loop serving vus, or nil when the driver's
// configuration takes another path.
func (d *Driver) Loop(vus []int) (driver.Loop, error) {
	if !d.loops() {
		return nil, nil
	}
	return newH1Loop(d.h1, vus)
}

// wakeID marks the loop's eventfd among the epoll events.
const wakeID = -1

// Epoll's flags, as an event's uint32 (syscall's EPOLLET is negative).
const (
	evIn   = unix.EPOLLIN | unix.EPOLLRDHUP
	evOut  = unix.EPOLLOUT
	evFail = unix.EPOLLERR | unix.EPOLLHUP
	evET   = 1 << 31
)

// h1Loop serves its VUs' connections from the goroutine that runs it.
type h1Loop struct {
	t      *h1Template
	ep     int // epoll
	wake   int // eventfd: Wake writes it
	conns  []h1Conn
	busy   int // operations in flight
	events []unix.EpollEvent
	ctx    context.Context
	host   driver.LoopHost
	check  time.Time // when to look for requests past their time next
	halted bool      // Run is ending its operations: none begins
	// beginning is set while an operation begins where another ended;
	// ready holds the VUs whose next one waits for the events at hand.
	beginning    bool
	ready, spare []*h1Conn
	lookups      lookups // answers of the name lookups in flight (loopdns.go)
	wakeMu       sync.Mutex
	closed       bool // under wakeMu: Wake writes nothing after Close
}

func newH1Loop(t *h1Template, vus []int) (*h1Loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeID}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	l := &h1Loop{t: t, ep: ep, wake: wake, conns: make([]h1Conn, len(vus)),
		events: make([]unix.EpollEvent, min(len(vus)+1, 512))}
	for i, vu := range vus {
		c := &l.conns[i]
		c.vu, c.id, c.fd = vu, int32(i), -1
		c.p.noBody, c.p.keepBody, c.p.sink = t.noBody, t.d.expectFails, &c.sink
	}
	return l, nil
}

// Wake makes Run look at its host again.
func (l *h1Loop) Wake() {
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if !l.closed {
		var one = [8]byte{1}
		_, _ = unix.Write(l.wake, one[:])
	}
}

// Close closes every connection, and the loop's epoll and eventfd.
func (l *h1Loop) Close() error {
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for i := range l.conns {
		l.conns[i].closeFD()
	}
	unix.Close(l.wake)
	return unix.Close(l.ep)
}

// Run serves the VUs until host is stopped and none is busy.
func (l *h1Loop) Run(ctx context.Context, host driver.LoopHost) {
	l.ctx, l.host, l.halted = ctx, host, false
	stopWatch := context.AfterFunc(ctx, l.Wake)
	defer stopWatch()
	l.check = host.Now().Add(l.t.slack)
	// What came on the idle connections since the last Run (an end, a
	// stray answer) is known before any of them carries a request.
	if !l.poll(0) {
		return
	}
	l.admit()
	for l.busy > 0 || len(l.ready) > 0 || !host.Stopped() {
		if ctx.Err() != nil {
			l.failAll(errLoopInterrupted)
			return
		}
		if !l.poll(l.waitMillis()) {
			return
		}
		l.beginReady()
		l.expire()
	}
}

// poll waits up to ms for events (-1: for ever) and acts on them; false
// when epoll failed, which ends every operation.
func (l *h1Loop) poll(ms int) bool {
	k, err := unix.EpollWait(l.ep, l.events, ms)
	if err != nil && err != unix.EINTR {
		l.failAll(fmt.Errorf("epoll_wait: %w", err))
		return false
	}
	woke := false
	for _, ev := range l.events[:max(k, 0)] {
		if ev.Fd == wakeID {
			woke = true
			continue
		}
		if c := &l.conns[ev.Fd]; ev.Pad == c.gen && c.fd >= 0 {
			l.handle(c, ev.Events)
		}
	}
	if woke {
		var b [8]byte
		_, _ = unix.Read(l.wake, b[:])
		l.takeLookups()
		l.admit()
	}
	return true
}

// admit begins an operation for every idle VU its host lets run.
func (l *h1Loop) admit() {
	for i := range l.conns {
		if c := &l.conns[i]; c.state == stIdle {
			l.next(c)
		}
	}
}

// beginReady begins the operations that wait in l.ready. Those that end
// as they begin wait for the next round, after the events: each round
// looks at the ctx, Wake and the clock.
func (l *h1Loop) beginReady() {
	ready := l.ready
	l.ready = l.spare[:0]
	for _, c := range ready {
		if c.state == stIdle {
			l.next(c)
		}
	}
	l.spare = ready[:0]
}

// waitMillis is how long epoll_wait may block: not at all while
// operations wait to begin, until the next look for requests past their
// time, or for ever when none is in flight (Wake and the ctx's end come
// through the eventfd).
func (l *h1Loop) waitMillis() int {
	switch {
	case len(l.ready) > 0:
		return 0
	case l.busy == 0: // equivalent mutant: false; the wait then ends at the next look, for nothing
		return -1
	}
	ms := (l.check.Sub(l.host.Now()) + time.Millisecond - 1) / time.Millisecond
	return int(max(ms, 1))
}

// expire fails the requests whose time is up; it looks once per slack.
func (l *h1Loop) expire() {
	now := l.host.Now()
	// Equivalent mutants: without now.Before(l.check) the loop looks at
	// every wake, which costs, not changes, what it reports; !Before and
	// After of the deadline differ within one nanosecond.
	if l.busy == 0 || now.Before(l.check) {
		return
	}
	l.check = now.Add(l.t.slack)
	for i := range l.conns {
		if c := &l.conns[i]; c.state != stIdle && !now.Before(c.deadline) {
			l.fail(c, errLoopTimeout)
		}
	}
}

// failAll ends every operation in flight with err, and begins no other.
func (l *h1Loop) failAll(err error) {
	l.halted = true
	for i := range l.conns {
		if c := &l.conns[i]; c.state != stIdle {
			l.fail(c, err)
		}
	}
	l.ready = l.ready[:0]
}

// Sentinels of the loop's own ends of a request.
var (
	errLoopTimeout     = errors.New("timeout")
	errLoopInterrupted = errors.New("interrupted")
)

// doInLoop runs one operation of VU vu through a loop of its own, on the
// connection it kept from the last: the package's tests run their cases on
// the closed model's path through Do (Driver.viaLoop).
func (d *Driver) doInLoop(ctx context.Context, st *vuState, vu int, r *driver.Result) {
	if st.loop == nil {
		l, err := newH1Loop(d.h1, []int{vu})
		if err != nil {
			*r = driver.Result{Op: d.name, Class: stats.Protocol, Message: err.Error()}
			return
		}
		st.loop = l
	}
	h := oneOp{r: r}
	st.loop.Run(ctx, &h)
}

// oneOp is the host of a loop that runs one operation.
type oneOp struct {
	begun bool
	r     *driver.Result
}

func (h *oneOp) Begin(int) (time.Time, bool) {
	if h.begun {
		return time.Time{}, false
	}
	h.begun = true
	return time.Now(), true
}

func (h *oneOp) Done(_ int, r *driver.Result, _, _ time.Time) { *h.r = *r }
func (h *oneOp) Stopped() bool                                { return h.begun }
func (h *oneOp) Now() time.Time                               { return time.Now() }
