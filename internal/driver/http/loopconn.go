//go:build linux

package httpdriver

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// A loop connection's states.
type connState uint8

const (
	stIdle       connState = iota // no operation in flight
	stConnecting                  // waiting for a non-blocking connect
	stWriting                     // the request is being written
	stReading                     // the answer is being read
	stResolving                   // waiting for the target's name to be looked up
)

// h1Conn is one VU of a loop, with its connection.
type h1Conn struct {
	vu       int
	id       int32 // its index in the loop: the epoll event's Fd
	gen      int32 // counts its connections: the epoll event's Pad, so an event of a closed one is known
	fd       int   // -1: no connection
	state    connState
	reused   bool // the connection served an earlier request
	in       bool // an input edge came that no read has taken yet
	hup      bool // the server has closed its side, or the connection failed: read to the end
	sent     int  // bytes of the request written
	buf      []byte
	r, w     int // buf[r:w] is read and not yet parsed
	p        h1Parser
	sink     bodySink
	res      driver.Result
	start    time.Time
	first    time.Time // the first byte of the answer, or zero
	dialAt   time.Time
	dialed   bool // this operation opened the connection
	addrs    []netip.AddrPort
	ai       int // the address dialed of addrs
	deadline time.Time
	op       uint64 // counts its operations: a lookup answers the one that asked
}

// next begins VU c's next operation if its host lets it, else leaves it idle.
func (l *h1Loop) next(c *h1Conn) {
	start, ok := l.host.Begin(c.vu)
	if !ok {
		c.state = stIdle
		return
	}
	l.busy++
	c.start, c.deadline, c.first = start, start.Add(l.t.timeout), time.Time{}
	c.res.Reset(l.t.d.name)
	c.res.BytesSent = int64(len(l.t.first.body))
	c.op++
	c.dialed = false
	l.send(c)
}

// send writes the request on c's connection, dialing one if it has none.
func (l *h1Loop) send(c *h1Conn) {
	c.p.reset()
	c.sink.reset(-1, false)
	c.sent = 0
	// The server closed its side while the connection was idle, or wrote
	// to it (an input edge, and bytes there): nothing of that answers the
	// request about to go. An edge alone may be one already taken.
	if c.fd >= 0 && (c.hup || c.in) {
		switch c.look() {
		case idleClosed:
			c.res.Counters[stats.IdleCloses]++
			c.closeFD()
		case idleStray:
			c.res.Counters[stats.StrayAnswers]++
			c.closeFD()
		default:
			c.in = false
		}
	}
	if c.fd < 0 {
		l.dial(c)
		return
	}
	c.reused = true
	c.state = stWriting
	l.write(c)
}

// dial opens a new connection for c's operation: it looks the target up
// (loopdns.go), then connects to its addresses in turn.
func (l *h1Loop) dial(c *h1Conn) {
	c.reused = false
	if c.dialed { // the next address, after a failed connect
		l.connectNext(c)
		return
	}
	c.dialed, c.dialAt = true, l.host.Now()
	if ip, err := netip.ParseAddr(l.t.host); err == nil {
		c.addrs, c.ai = append(c.addrs[:0], netip.AddrPortFrom(ip.Unmap(), l.t.port)), 0
		l.connectNext(c)
		return
	}
	c.state = stResolving
	l.lookup(c)
}

// connectNext starts a non-blocking connect to c.addrs[c.ai], or the
// first of the addresses after it that takes one.
func (l *h1Loop) connectNext(c *h1Conn) {
	if len(c.addrs) == 0 {
		l.fail(c, &net.OpError{Op: "dial", Net: "tcp", Err: errNoAddress})
		return
	}
	for ; c.ai < len(c.addrs); c.ai++ {
		err := c.connect(l.ep, c.addrs[c.ai])
		if err == nil {
			c.state = stConnecting
			return
		}
		if c.ai == len(c.addrs)-1 {
			l.fail(c, dialError(c.addrs[c.ai], err))
			return
		}
	}
}

// connect starts a non-blocking connect to a and watches the socket.
func (c *h1Conn) connect(ep int, a netip.AddrPort) error {
	family, sa := unix.AF_INET, unix.Sockaddr(&unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().As4()})
	if a.Addr().Is6() {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as Go's net does
	if err := unix.Connect(fd, sa); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return os.NewSyscallError("connect", err)
	}
	c.gen++
	ev := unix.EpollEvent{Events: evIn | evOut | evET, Fd: c.id, Pad: c.gen}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	c.fd, c.in, c.hup = fd, false, false
	if c.buf == nil {
		c.buf = make([]byte, readBufSize)
	}
	c.r, c.w = 0, 0
	return nil
}

var errNoAddress = errors.New("no address for the host")

func dialError(a netip.AddrPort, err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(a), Err: err}
}

// handle acts on an epoll event of c's connection.
func (l *h1Loop) handle(c *h1Conn, ev uint32) {
	if ev&(evIn|evFail) != 0 {
		c.in = true
	}
	if ev&(unix.EPOLLRDHUP|evFail) != 0 {
		c.hup = true
	}
	switch c.state {
	case stConnecting:
		if ev&(evOut|evFail) != 0 {
			l.connected(c)
		}
	case stWriting:
		if ev&(evOut|evFail) != 0 {
			l.write(c)
		}
	case stReading:
		if c.in {
			l.read(c)
		}
	}
}

// connected finishes a connect: the request goes out, or the next
// address is tried.
func (l *h1Loop) connected(c *h1Conn) {
	errno, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno != 0 {
		err = os.NewSyscallError("connect", unix.Errno(errno))
	}
	if err != nil {
		c.closeFD()
		if c.ai++; c.ai < len(c.addrs) {
			l.connectNext(c)
			return
		}
		l.fail(c, dialError(c.addrs[len(c.addrs)-1], err))
		return
	}
	c.res.Connect = l.host.Now().Sub(c.dialAt)
	c.state = stWriting
	l.write(c)
}

// write writes what is left of the request; an EAGAIN waits for the
// connection's output edge.
func (l *h1Loop) write(c *h1Conn) {
	req := l.t.first.req
	for c.sent < len(req) {
		n, err := unix.Write(c.fd, req[c.sent:])
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			l.writeFailed(c, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", err)})
			return
		}
		c.sent += n
	}
	c.state = stReading
	if c.in { // an edge came while it connected or wrote: the answer may have begun
		l.read(c)
	}
}

// writeFailed ends a request whose write failed with err, unless the
// server answered before it closed (a 413 before the body): that answer,
// already in the socket, is the request's.
func (l *h1Loop) writeFailed(c *h1Conn, err error) {
	if c.look() != idleStray {
		l.fail(c, err)
		return
	}
	c.state, c.in = stReading, true
	l.read(c)
}

// read reads and parses what has come. Edge-triggered: it reads until a
// read comes back short (the socket was empty then; more raises an edge),
// or, once the server closed its side, to the end; or until the answer
// has ended.
func (l *h1Loop) read(c *h1Conn) {
	for {
		if c.w == len(c.buf) {
			if c.r == 0 {
				l.fail(c, errLineTooLong)
				return
			}
			c.w = copy(c.buf, c.buf[c.r:c.w])
			c.r = 0
		}
		n, err := unix.Read(c.fd, c.buf[c.w:])
		switch {
		case err == unix.EAGAIN:
			c.in = false
			return
		case err != nil:
			l.fail(c, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)})
			return
		case n == 0:
			l.eof(c)
			return
		}
		full := c.w+n == len(c.buf)
		c.w += n
		c.in = full || c.hup // more may be there: a short read emptied the socket, an end come raises no edge
		if l.parse(c, l.host.Now()) || !c.in {
			return
		}
	}
}

// parse parses the bytes read; it reports whether the operation ended
// (its answer, or a malformed one). now is when they were read: the
// answer's first byte, if none came before, and its end, if it ends.
func (l *h1Loop) parse(c *h1Conn, now time.Time) bool {
	if c.first.IsZero() {
		c.first = now
	}
	used, err := c.p.feed(c.buf[c.r:c.w])
	c.r += used
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	switch {
	case err != nil:
		l.fail(c, err)
		return true
	case c.p.phase == phaseDone:
		l.finish(c, now)
		return true
	}
	return false
}

// eof is the server closing the connection while c reads.
func (l *h1Loop) eof(c *h1Conn) {
	if err := c.p.eof(c.w - c.r); err != nil {
		l.fail(c, err)
		return
	}
	l.finish(c, l.host.Now())
}

// finish records c's answer, which ended at end.
func (l *h1Loop) finish(c *h1Conn, end time.Time) {
	r := &c.res
	r.TTFB = c.first.Sub(c.start)
	r.BytesRecv = c.p.got
	r.Counters[stats.BodyBytes] = c.sink.n
	l.t.d.judge(r, c.p.status, c.p.reason, c.sink.head, c.sink.n)
	// Bytes after the answer, read or not yet, came before the next
	// request: they answer none of it. The connection goes with them. A
	// read that filled the buffer may have left some: look. An end the
	// answer did not announce is the server closing a kept-alive
	// connection, found before it was reused.
	state := idleOpen
	switch {
	case c.r < c.w:
		state = idleStray
	case c.hup || c.in:
		state = c.look()
	}
	switch {
	case state == idleStray && !c.p.switched: // after a 101, the other protocol's
		r.Counters[stats.StrayAnswers]++
	case state == idleClosed && !c.p.close:
		r.Counters[stats.IdleCloses]++
	}
	if state != idleOpen || c.p.close || l.t.closeEach {
		c.closeFD()
	}
	c.in = false
	l.end(c, end)
}

// fail ends c's operation with err, and closes its connection: what the
// server writes later is no answer to the next request. A request that
// found its kept-alive connection closed by the server, with no byte of
// an answer, is sent once more on a new one when it may be (retry).
func (l *h1Loop) fail(c *h1Conn, err error) {
	pending := int64(c.w - c.r) // a line cut short came too
	c.closeFD()
	if l.retry(c, err) {
		c.res.Counters[stats.Retries]++
		c.res.BytesSent += int64(len(l.t.first.body))
		l.send(c)
		return
	}
	r := &c.res
	switch err {
	case errLoopTimeout:
		r.Class, r.Message = stats.Timeout, timeoutMessage(l.t.timeout)
	case errLoopInterrupted:
		r.Class, r.Message = stats.Interrupted, l.interruptMessage()
	default:
		r.Class, r.Message = dial.Classify(err, nil)
		if !c.first.IsZero() { // the answer had begun
			r.Class = dial.BodyClass(r.Class)
		}
	}
	if !c.first.IsZero() {
		r.TTFB = c.first.Sub(c.start)
	}
	r.BytesRecv = c.p.got + pending
	r.Counters[stats.BodyBytes] = c.sink.n
	l.end(c, l.host.Now())
}

// interruptMessage is why an interrupted request's ctx ended.
func (l *h1Loop) interruptMessage() string {
	if err := l.ctx.Err(); err != nil {
		return err.Error()
	}
	return "interrupted"
}

// retry tells whether c's request, failed with err, goes out again: once
// (it goes on a new connection, which is not reused), by the rule of
// every path (mayRetry).
func (l *h1Loop) retry(c *h1Conn, err error) bool {
	return !l.halted && c.res.Counters[stats.Retries] == 0 && c.first.IsZero() && mayRetry(c.reused, c.p.started(), err)
}

// end hands c's operation to the host and begins the VU's next one: at
// once, as the VU's connection has nothing left to read (finish and fail
// close it else), unless an operation is already beginning further up
// (one that failed as it began: no descriptor, a refused connect); then
// after the events at hand, from l.ready, so that nothing nests deeper.
func (l *h1Loop) end(c *h1Conn, end time.Time) {
	l.busy--
	c.state = stIdle
	l.host.Done(c.vu, &c.res, c.start, end)
	switch {
	case l.halted: // equivalent mutant: false; a halted loop's host begins nothing
	case l.beginning:
		l.ready = append(l.ready, c)
	default:
		l.beginning = true
		l.next(c)
		l.beginning = false
	}
}

// look tells what waits in c's idle socket, without taking it: an end
// (or an error), bytes, or nothing.
func (c *h1Conn) look() idleState {
	var b [1]byte
	n, _, err := unix.Recvfrom(c.fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	switch {
	case err == unix.EAGAIN:
		return idleOpen
	case err != nil || n == 0:
		return idleClosed
	}
	return idleStray
}

// closeFD closes c's connection, if open; closing removes it from epoll.
func (c *h1Conn) closeFD() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd, c.in, c.hup, c.r, c.w = -1, false, false, 0, 0
	}
}
