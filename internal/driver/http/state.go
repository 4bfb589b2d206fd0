package httpdriver

import (
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
)

// vuState is what one VU reuses from request to request: the ClientTrace
// (built once, so tracing costs no allocation per request), the sink the
// response body is read into, and the instants the trace records.
//
// The trace hooks we use, GotConn and GotFirstResponseByte, run before
// RoundTrip returns the response. Only a request cut short (timeout,
// interrupt) can leave one to fire later, during the VU's next request; the
// fields are atomic so that is never a data race, and a first byte stamped
// before the current start is ignored.
type vuState struct {
	epoch     time.Time    // the driver's clock origin
	firstByte atomic.Int64 // ns since epoch at the first response byte; 0 if none
	connect   atomic.Int64 // dial+TLS time of a new connection; 0 if reused
	conns     atomic.Int32 // connections the request got (GotConn): more than one, it was retried
	reused    atomic.Bool  // the last connection it got had served an earlier request
	trace     *httptrace.ClientTrace
	body      bodySink
	rt        *http.Transport // the VU's own net/http transport, or nil
	h1        *h1Client       // the VU's own HTTP/1.1 client, or nil
	loop      *h1Loop         // tests only: the VU's own loop (Driver.viaLoop)
}

func newVUState(epoch time.Time) *vuState {
	s := &vuState{epoch: epoch, body: newBodySink()}
	s.trace = &httptrace.ClientTrace{
		GotConn:              s.gotConn,
		GotFirstResponseByte: s.gotFirstResponseByte,
	}
	return s
}

func (s *vuState) now() int64 { return int64(time.Since(s.epoch)) }

func (s *vuState) gotConn(info httptrace.GotConnInfo) {
	s.conns.Add(1)
	s.reused.Store(info.Reused)
	s.connect.Add(int64(dial.ClaimConnect(info.Conn))) // 0 for a reused connection
}

// gotFirstResponseByte stamps the first byte of the first answer: of an
// interim one, or of the first of the redirects followed.
func (s *vuState) gotFirstResponseByte() { s.firstByte.CompareAndSwap(0, s.now()) }

// begin resets the state for a new request and returns its start stamp.
func (s *vuState) begin() int64 {
	s.firstByte.Store(0)
	s.connect.Store(0)
	s.conns.Store(0)
	return s.now()
}

// ttfb is the time from start to the first response byte, or fallback when
// the hook did not fire for this request.
func (s *vuState) ttfb(start int64, fallback time.Duration) time.Duration {
	if fb := s.firstByte.Load(); fb >= start { // boundary mutant left: a first byte in the request's own nanosecond
		return time.Duration(fb - start)
	}
	return fallback
}
