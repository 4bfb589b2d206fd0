package httpdriver

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// The goroutine path of perflab's HTTP/1.1 client: the open model's VUs,
// TLS, and redirects followed. A VU's goroutine sends the request on its
// own keep-alive connection, plain or TLS, and reads the answer with the
// parser of the loops (h1parse.go), under the same connection rules
// (rules.go): what the loops report, it reports the same way, and every
// behavioural test of the package runs on both.
//
// The read buffer is borrowed from a pool for the request's time only: a
// VU waiting for its next arrival holds none.

// h1Client is one VU's HTTP/1.1 client. Only the VU's goroutine uses it,
// except what interrupt touches: the connection's deadline, under mu.
type h1Client struct {
	t        *h1Template
	st       *vuState
	conn     net.Conn    // nil: none open; set under mu
	peeker   peeker      // looks at the socket under conn between requests
	records  *recordConn // the TCP connection under a TLS conn, or nil
	reused   bool        // conn served an earlier request
	answered bool        // a byte of the answer to the request in flight came
	origin   string      // conn's scheme://host:port
	armed    time.Time   // the deadline set on conn; zero when none is known
	buf      *[connBufSize]byte
	r, w     int // buf[r:w] is read and not yet parsed
	p        h1Parser

	watched context.Context // the ctx whose end interrupts requests
	mu      sync.Mutex
	gen     uint64      // watch generation: a late interrupt from a replaced ctx is ignored
	stop    func() bool // unregisters the watch on watched
	halted  atomic.Bool // watched is done: every deadline stays past
}

func newH1Client(t *h1Template, st *vuState) *h1Client {
	c := &h1Client{t: t, st: st}
	c.p.noBody, c.p.keepBody, c.p.sink, c.p.follow = t.noBody, t.d.expectFails, &st.body, t.d.follow > 0
	return c
}

// connBufSize is the read buffer of a request in flight: a line must fit
// (maxLineBytes), and a TLS record (16 KiB) does, read at once. Every
// request in flight holds one: a stall that keeps 200 VUs busy holds 3 MiB.
const connBufSize = 16 << 10

// connBufs holds the read buffers not in use.
var connBufs = sync.Pool{New: func() any { return new([connBufSize]byte) }}

// alreadyPassed is a deadline that has passed: it makes pending reads and
// writes on a connection return at once.
var alreadyPassed = time.Unix(1, 0)

// do sends the VU's request, follows its redirects if asked, and fills in
// r (Op is set by the caller).
func (c *h1Client) do(ctx context.Context, start int64, r *driver.Result) {
	if err := ctx.Err(); err != nil {
		r.Class, r.Message = stats.Interrupted, err.Error()
		return
	}
	c.watch(ctx)
	deadline := c.st.epoch.Add(time.Duration(start) + c.t.timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl // the engine's: its expiry is Interrupted
	}
	hop := &c.t.first
	for redirects := 0; ; redirects++ {
		err := c.exchange(ctx, hop, deadline, r)
		if err != nil {
			c.failed(ctx, err, start, r)
			return
		}
		next := c.t.d.redirect(hop.url, hop.method, hop.body, c.p.status, c.p.location, redirects)
		if next == nil {
			break
		}
		hop = next
	}
	r.TTFB = c.st.ttfb(start, 0)
	c.t.d.judge(r, c.p.status, c.p.reason, c.st.body.head, c.st.body.n)
}

// failed fills in r for a request that failed with err.
func (c *h1Client) failed(ctx context.Context, err error, start int64, r *driver.Result) {
	c.closeConn()
	r.TTFB = c.st.ttfb(start, 0) // a byte may have come before the failure
	r.Class, r.Message = dial.Classify(err, ctx)
	switch {
	case r.Class == stats.Timeout && ctx.Err() == nil:
		r.Message = timeoutMessage(c.t.timeout)
	case r.TTFB > 0: // the answer had begun
		r.Class = dial.BodyClass(r.Class)
	}
}

// exchange sends one request of hop and reads its answer whole, counting
// what went and came; a request that found its kept-alive connection
// closed before any byte of an answer goes once more on a new one
// (mayRetry).
func (c *h1Client) exchange(ctx context.Context, hop *h1Hop, deadline time.Time, r *driver.Result) error {
	r.BytesSent += int64(len(hop.body))
	err := c.roundTrip(ctx, hop, deadline, r)
	if err != nil && mayRetry(c.reused, c.answered, err) && !c.halted.Load() {
		r.Counters[stats.Retries]++
		r.BytesSent += int64(len(hop.body))
		c.closeConn()
		err = c.roundTrip(ctx, hop, deadline, r)
	}
	r.BytesRecv += c.p.got + int64(c.w-c.r) // a line cut short came too
	r.Counters[stats.BodyBytes] += c.st.body.n
	c.putBuf()
	return err
}

// roundTrip writes hop's request on the VU's connection (a new one if it
// has none, or none it may reuse) and reads the answer.
func (c *h1Client) roundTrip(ctx context.Context, hop *h1Hop, deadline time.Time, r *driver.Result) error {
	c.p.reset()
	c.st.body.reset(-1, false)
	c.r, c.w, c.answered = 0, 0, false
	if c.conn != nil && c.origin == hop.origin {
		c.checkIdle(r)
	} else {
		c.closeConn()
	}
	if c.conn == nil {
		if err := c.dial(ctx, hop, deadline, r); err != nil {
			return err
		}
	} else {
		c.reused = true
	}
	if err := c.arm(deadline); err != nil {
		return err
	}
	if _, werr := c.conn.Write(hop.req); werr != nil {
		// The server may have answered early and closed (a 413 before
		// the body): that answer is the request's.
		if err := c.readAnswer(); err != nil && !c.answered {
			return werr
		} else if err != nil {
			return err
		}
	} else if err := c.readAnswer(); err != nil {
		return err
	}
	switch {
	case c.r < c.w && !c.p.switched: // bytes behind the answer, before the next request: no answer to it
		r.Counters[stats.StrayAnswers]++
		c.closeConn()
	case c.r < c.w, c.p.close, c.t.closeEach:
		c.closeConn()
	case c.records != nil && c.records.midRecord(): // part of a record behind the answer: unexplained
		c.closeConn()
	}
	c.r, c.w = 0, 0
	return nil
}

// readAnswer reads until the parser has the whole answer.
func (c *h1Client) readAnswer() error {
	if c.buf == nil {
		c.buf = connBufs.Get().(*[connBufSize]byte)
	}
	for {
		if c.w == len(c.buf) { // a partial line at the end: move it to the start
			c.w = copy(c.buf[:], c.buf[c.r:c.w])
			c.r = 0
		}
		n, err := c.conn.Read(c.buf[c.w:])
		if n > 0 {
			c.answered = true
			if c.st.firstByte.Load() == 0 {
				c.st.firstByte.Store(c.st.now())
			}
			c.w += n
			used, perr := c.p.feed(c.buf[c.r:c.w])
			if c.r += used; perr != nil {
				return perr
			}
			if c.p.phase == phaseDone {
				return nil
			}
		}
		switch {
		case err == io.EOF:
			c.p.close = true
			return c.p.eof(c.w - c.r)
		case err != nil:
			return err
		}
	}
}

// putBuf returns the read buffer to the pool.
func (c *h1Client) putBuf() {
	if c.buf != nil {
		connBufs.Put(c.buf)
		c.buf = nil
	}
}

// dial opens a connection to hop's origin under the request's deadline.
func (c *h1Client) dial(ctx context.Context, hop *h1Hop, deadline time.Time, r *driver.Result) error {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var (
		conn net.Conn
		err  error
	)
	var records *recordConn
	if hop.tls {
		conn, err = c.t.dl.DialTLSOver(dctx, "tcp", hop.addr, func(raw net.Conn) net.Conn {
			records = &recordConn{Conn: raw}
			return records
		})
	} else {
		conn, err = c.t.dl.Dial(dctx, "tcp", hop.addr)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return errRequestTimeout
		}
		return err
	}
	r.Connect += dial.ClaimConnect(conn)
	c.mu.Lock()
	c.conn, c.origin, c.reused, c.armed = conn, hop.origin, false, time.Time{}
	c.peeker, c.records = newPeeker(conn), records
	c.mu.Unlock()
	return nil
}

// errRequestTimeout is a request whose time ran out while it dialed.
var errRequestTimeout = &timeoutError{}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "request timed out" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// checkIdle looks at the kept-alive connection before it is reused: one
// the server closed while idle, or wrote to (no answer to anything asked
// since), is closed, and counted.
func (c *h1Client) checkIdle(r *driver.Result) {
	state, moved := c.peeker.look()
	if moved {
		c.armed = time.Time{}
	}
	switch state {
	case idleClosed:
		r.Counters[stats.IdleCloses]++
		c.closeConn()
	case idleStray:
		r.Counters[stats.StrayAnswers]++
		c.closeConn()
	case idleUnknown:
		c.closeConn()
	}
}

// closeConn closes the VU's connection, if open.
func (c *h1Client) closeConn() {
	if c.conn == nil {
		return
	}
	c.mu.Lock()
	_ = c.conn.Close()
	c.conn, c.peeker, c.records, c.armed, c.reused = nil, peeker{}, nil, time.Time{}, false
	c.mu.Unlock()
}

// Close closes the connection; the VU sends no more requests.
func (c *h1Client) Close() { c.closeConn() }

// arm sets the connection's deadline for a request that must end by
// deadline. A deadline is a runtime timer update, so one serves several
// requests: it is set slack later than asked and kept while later
// requests ask for no later; a request's time limit ends up between its
// timeout and the timeout plus slack. An interrupted VU's deadline stays
// in the past: setting it, then looking at the flag, leaves it past
// whichever of interrupt and arm goes first.
func (c *h1Client) arm(deadline time.Time) error {
	if c.halted.Load() {
		return c.past()
	}
	if !c.armed.IsZero() && !c.armed.Before(deadline) && c.armed.Sub(deadline) <= c.t.slack {
		return nil
	}
	later := deadline.Add(c.t.slack)
	err := c.conn.SetDeadline(later)
	c.armed = later
	if c.halted.Load() { // an interrupt between the first look and now
		return c.past()
	}
	return err
}

// past moves the deadline into the past and forgets the one set before.
func (c *h1Client) past() error {
	c.armed = time.Time{}
	if c.conn == nil {
		return nil
	}
	_ = c.conn.SetDeadline(alreadyPassed)
	return context.Canceled
}

// watch arranges for the request in flight to be interrupted when ctx is
// done. A VU's requests normally share one ctx (the engine's), so the
// watch is registered once, not per request; a different ctx replaces
// it, and the generation number makes a late call from the old one a no-op.
func (c *h1Client) watch(ctx context.Context) {
	if ctx == c.watched || ctx.Done() == nil && c.watched == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.gen++
	c.watched, c.armed = ctx, time.Time{} // an interrupt may have moved the deadline
	c.halted.Store(false)
	if ctx.Done() != nil {
		gen := c.gen
		c.stop = context.AfterFunc(ctx, func() { c.interrupt(gen) })
	}
}

// interrupt runs when the watched ctx of generation gen is done: the VU's
// connection deadline moves into the past so that a read or write in
// flight returns at once, and stays there (arm).
func (c *h1Client) interrupt(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // that ctx is no longer watched
	}
	c.halted.Store(true)
	if c.conn != nil {
		_ = c.conn.SetDeadline(alreadyPassed)
	}
}

// tlsConn is conn as a TLS connection, or nil.
func tlsConn(conn net.Conn) *tls.Conn {
	tc, _ := conn.(*tls.Conn)
	return tc
}
