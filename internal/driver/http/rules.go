package httpdriver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
)

// The connection rules of perflab's HTTP/1.1 client, on the loops and
// the goroutine path alike (docs/how-it-measures.md):
//
//   - A kept-alive connection is looked at before it is reused: one the
//     server closed while it was idle (the kernel has its end) is closed
//     and a new one opened, counted as an idle close; one the server
//     wrote to meanwhile (no request was out: those bytes answer
//     nothing) is closed, counted as a stray answer.
//   - Bytes behind a complete answer close the connection, counted as a
//     stray answer: they are never taken as the next request's answer.
//   - A request that fails on a reused connection before any byte of its
//     answer, because the connection was closed or reset, is sent once
//     more on a new connection, whatever its method, and counted as a
//     retry (mayRetry). A server that read such a request and closed the
//     connection without answering sees it twice; the count says how
//     often.
//   - A 101, an answer that ends with the connection (no length), or
//     "Connection: close" closes the connection after the answer; an
//     answer not read to its end (a failure, a timeout, an interrupt)
//     closes it too.

// RulesText is the rules in a few lines, for `perflab http --help`.
func RulesText() string {
	return fmt.Sprintf(`Answers: a success is a final answer read whole whose status is expected
(--expect-status, 200-399 by default); interim 1xx answers are skipped; a 101
fails unless expected. TTFB is to the first byte of any answer, interim or
redirect included. Received bytes are whole answers (status line, headers,
framing, body). A request that fails on a reused connection before any byte of
its answer, the connection closed under it, is sent once more on a new one and
counted as a retry. Bounds: a line %d KiB, %d header fields, %d KiB of headers
(interim answers included), %d KiB of trailers; past one, a protocol failure.
`, maxLineBytes>>10, maxHeaderFields, maxHeaderBytes>>10, maxTrailerBytes>>10)
}

// mayRetry tells whether a request that failed with err goes out once
// more: it was sent on a reused connection, no byte of its answer came,
// and the connection was closed or reset under it.
func mayRetry(reused, began bool, err error) bool {
	return reused && !began && connClosed(err)
}

// connClosed tells whether err is the connection's end: the server's
// close or reset (net/http closes its side when its reader finds the
// server's end: net.ErrClosed). net/http says "server closed idle connection" for an
// end it read before any byte of an answer, in an error it does not
// export.
func connClosed(err error) bool {
	for _, e := range []error{errServerClosed, io.EOF, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNABORTED, net.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return strings.Contains(err.Error(), "server closed idle connection")
}

// errServerClosed is a connection the server closed before any byte of
// the answer.
var errServerClosed = errors.New("server closed the connection before the response")

// What a look at an idle connection found.
type idleState uint8

const (
	idleOpen    idleState = iota // nothing: the connection may carry the next request
	idleClosed                   // the server closed it, or it failed
	idleStray                    // the server wrote to it
	idleUnknown                  // TLS records that gave no answer within tlsLook: closed, not counted
)

// tlsLook is how long a look at an idle TLS connection with bytes waiting
// may wait for a record of the answer's to be whole; tlsWhole how long it
// may take to read one that is whole in the socket already. A read past
// its deadline reads nothing, even with the bytes there: on a busy
// machine a goroutine descheduled between the deadline and the read for
// longer than tlsLook would take a server's close for an unknown record,
// uncounted.
const (
	tlsLook  = time.Millisecond
	tlsWhole = 250 * time.Millisecond
)

// peeker looks at the socket of a connection between requests, without
// taking from it.
type peeker struct {
	raw syscall.RawConn // of the TCP socket
	tls *tls.Conn       // non-nil: the connection is TLS
}

func newPeeker(conn net.Conn) peeker {
	p := peeker{tls: tlsConn(conn)}
	under := conn
	if p.tls != nil {
		under = p.tls.NetConn()
	}
	if sc, ok := dial.Unwrap(under).(syscall.Conn); ok {
		p.raw, _ = sc.SyscallConn()
	}
	return p
}

// look peeks at the socket: an end, bytes, or nothing. On TLS, bytes may
// be records of TLS's own (a session ticket, an alert) that carry no
// answer: a read that may wait for tlsLook finds an answer's bytes or an
// end (a read past its deadline reads nothing); it moves the
// connection's deadline (moved says so). TLS's own records come after a
// handshake, and the first answer's read takes them, so the wait is rare.
func (p peeker) look() (idleState, bool) {
	if p.raw == nil {
		return idleOpen, false
	}
	var (
		b   [1]byte
		n   int
		err error
	)
	again := false
	_ = p.raw.Read(func(fd uintptr) bool {
		n, again, err = peekSocket(fd, b[:])
		return true
	})
	switch {
	case again:
		return idleOpen, false
	case err != nil || n == 0:
		return idleClosed, false
	case p.tls == nil:
		return idleStray, false
	}
	wait := tlsLook
	if p.wholeRecord() {
		wait = tlsWhole
	}
	_ = p.tls.SetReadDeadline(time.Now().Add(wait))
	n, err = p.tls.Read(b[:])
	switch {
	case n > 0:
		return idleStray, true
	case errors.Is(err, os.ErrDeadlineExceeded):
		// TLS's own records (a session ticket), or part of an answer's
		// record: nothing tells them apart, so the connection goes.
		return idleUnknown, true
	}
	return idleClosed, true
}

// wholeRecord tells whether the socket holds a whole TLS record, its
// header first: the bytes between requests start at a record's header
// (an answer that ended inside a record closed its connection).
func (p peeker) wholeRecord() bool {
	var hdr [5]byte
	if n := p.peek(hdr[:]); n < len(hdr) {
		return false
	}
	need := len(hdr) + (int(hdr[3])<<8 | int(hdr[4]))
	var n int
	_ = p.raw.Read(func(fd uintptr) bool {
		n = waiting(fd)
		return true
	})
	return n >= need
}

// peek is how many bytes of b the socket's waiting bytes fill.
func (p peeker) peek(b []byte) int {
	var n int
	_ = p.raw.Read(func(fd uintptr) bool {
		n, _, _ = peekSocket(fd, b)
		return true
	})
	return max(n, 0)
}

// recordConn is the TCP connection under a TLS one. It follows the TLS
// records in the bytes TLS reads from it, so that it can tell when TLS
// has read part of a record it has not handed over: bytes of something
// no request asked for, come with the last bytes of an answer, which no
// look at the socket can see. (A whole such record TLS read ahead is not
// seen: docs/how-it-measures.md.)
type recordConn struct {
	net.Conn
	hdr  [5]byte
	hn   int // bytes of the next record's header read
	left int // bytes of the current record's body still to come
}

func (c *recordConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.follow(b[:n])
	return n, err
}

// follow moves along the records in b, the next bytes read.
func (c *recordConn) follow(b []byte) {
	for len(b) > 0 {
		if c.left > 0 {
			k := min(c.left, len(b))
			c.left, b = c.left-k, b[k:]
			continue
		}
		k := copy(c.hdr[c.hn:], b)
		c.hn, b = c.hn+k, b[k:]
		if c.hn == len(c.hdr) {
			c.left, c.hn = int(c.hdr[3])<<8|int(c.hdr[4]), 0
		}
	}
}

// midRecord tells whether the bytes read end inside a record.
func (c *recordConn) midRecord() bool { return c.hn > 0 || c.left > 0 }

// SyscallConn is the TCP connection's, for a look at its socket.
func (c *recordConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}
