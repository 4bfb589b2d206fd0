package httpdriver

import (
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
)

// vuState is what one VU reuses from request to request: its client (its
// own net/http transport, or perflab's HTTP/1.1 client), the sink the
// response body is read into, and the instant of the first byte of the
// request in flight.
type vuState struct {
	epoch     time.Time    // the driver's clock origin
	firstByte atomic.Int64 // ns since epoch at the first response byte; 0 if none
	body      bodySink
	net       *netTrace       // what net/http's hooks record; nil until the VU takes that path
	rt        *http.Transport // the VU's own net/http transport, or nil
	h1        *h1Client       // the VU's own HTTP/1.1 client, or nil
	loop      *h1Loop         // tests only: the VU's own loop (Driver.viaLoop)
}

func newVUState(epoch time.Time) *vuState {
	return &vuState{epoch: epoch, body: newBodySink()}
}

func (s *vuState) now() int64 { return int64(time.Since(s.epoch)) }

// begin resets the state for a new request and returns its start stamp.
func (s *vuState) begin() int64 {
	s.firstByte.Store(0)
	if s.net != nil {
		s.net.begin()
	}
	return s.now()
}

// ttfb is the time from start to the first response byte, or fallback when
// none came.
func (s *vuState) ttfb(start int64, fallback time.Duration) time.Duration {
	if fb := s.firstByte.Load(); fb >= start { // boundary mutant left: a first byte in the request's own nanosecond
		return time.Duration(fb - start)
	}
	return fallback
}

// netTrace is what the httptrace hooks of a VU's net/http requests record,
// on a ClientTrace built once (so tracing costs no allocation per
// request). The hooks run before RoundTrip returns; only a request cut
// short (a timeout, an interrupt) can leave one to fire later: the VU
// then takes a new netTrace, and the old one's late hooks stamp nothing
// the VU reads.
type netTrace struct {
	st       *vuState
	trace    *httptrace.ClientTrace
	connect  atomic.Int64 // dial+TLS time of the connections opened
	conns    atomic.Int32 // connections the request asked for (GetConn): more than one, net/http retried it
	reused   atomic.Bool  // the connection of its last attempt had served an earlier request
	answered atomic.Bool  // a byte of an answer came since the attempt began
	interim  atomic.Int64 // bytes of the interim answers' status lines and headers
	stale    bool         // a request was cut short: the next takes a new netTrace
}

// netTraceOf is s's netTrace, a new one when the last was left stale.
func (s *vuState) netTraceOf() *netTrace {
	if s.net == nil || s.net.stale {
		n := &netTrace{st: s}
		n.trace = &httptrace.ClientTrace{
			GetConn:              n.getConn,
			GotConn:              n.gotConn,
			GotFirstResponseByte: n.gotFirstResponseByte,
			Got1xxResponse:       n.got1xxResponse,
		}
		s.net = n
	}
	return s.net
}

func (n *netTrace) begin() {
	n.connect.Store(0)
	n.conns.Store(0)
	n.reused.Store(false)
	n.answered.Store(false)
	n.interim.Store(0)
}

// getConn begins an attempt: net/http asks for a connection once per
// attempt, and an attempt whose dial fails gets none.
func (n *netTrace) getConn(string) {
	if n != n.st.net {
		return // a late hook of a request cut short
	}
	n.conns.Add(1)
	n.reused.Store(false)
}

func (n *netTrace) gotConn(info httptrace.GotConnInfo) {
	if n != n.st.net {
		return
	}
	n.reused.Store(info.Reused)
	n.connect.Add(int64(dial.ClaimConnect(info.Conn))) // 0 for a reused connection
}

// gotFirstResponseByte stamps the first byte of the first answer: of an
// interim one, or of the first of the redirects followed.
func (n *netTrace) gotFirstResponseByte() {
	if n != n.st.net {
		return
	}
	n.answered.Store(true)
	n.st.firstByte.CompareAndSwap(0, n.st.now())
}

// got1xxResponse counts an interim answer's head, as HTTP/1.1 writes it,
// and holds the heads of a request's answers to the bound perflab's own
// parser keeps: net/http resets its own bound at each interim answer a
// hook is told of.
func (n *netTrace) got1xxResponse(code int, h textproto.MIMEHeader) error {
	size := len("HTTP/1.1 100 ") + len(http.StatusText(code)) + 4
	for name, values := range h {
		for _, v := range values {
			size += len(name) + len(": ") + len(v) + 2
		}
	}
	if n.interim.Add(int64(size)) > maxHeaderBytes {
		return errHeaderTooLarge
	}
	return nil
}
