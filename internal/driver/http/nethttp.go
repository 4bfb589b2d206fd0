package httpdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// The net/http path: HTTP/2 (TLS and h2c), ALPN negotiation, shared pools.
// TTFB and connection reuse come from httptrace, on a ClientTrace the VU
// reuses; connect time from the dialer (see timedConn).

func (d *Driver) doNet(ctx context.Context, st *vuState, start int64, r *driver.Result) {
	rctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	nt := st.netTraceOf()
	nt.begin()
	req := d.tmpl.WithContext(withTrace(rctx, nt))
	if len(d.body) > 0 { // equivalent mutant: >= 0; net/http probes a Body of no announced length and sends none when it is empty
		req.Body = &bodyReader{b: d.body}
	}
	rt := d.rt
	if st.rt != nil {
		rt = st.rt
	}
	for followed := 0; ; followed++ {
		resp, err := d.roundTripNet(rt, req, nt, r)
		r.Connect = time.Duration(nt.connect.Load())
		r.TTFB = st.ttfb(start, 0) // a byte may have come before a failure
		if err == nil {
			err = checkAnswer(resp)
		}
		if err != nil {
			nt.stale = true
			r.Class, r.Message = d.classifyNet(err, ctx, rctx)
			if r.TTFB > 0 { // the answer had begun
				r.Class = dial.BodyClass(r.Class)
			}
			return
		}
		if !d.readNet(ctx, rctx, st, resp, r) {
			return
		}
		if req = d.redirectNet(req, resp, followed); req == nil {
			return
		}
		nt.conns.Store(0)
		nt.answered.Store(false)
	}
}

// roundTripNet is rt.RoundTrip under perflab's retry rule (rules.go),
// which net/http follows only for requests it takes to be replayable: a
// request that failed on a reused connection before any byte of an answer
// came, the connection closed or reset under it, goes once more, on the
// connection net/http picks next (never that one), and is counted.
func (d *Driver) roundTripNet(rt *http.Transport, req *http.Request, nt *netTrace, r *driver.Result) (*http.Response, error) {
	if req.Body != nil {
		r.BytesSent += req.ContentLength
	}
	resp, err := rt.RoundTrip(req)
	if err != nil && req.Context().Err() == nil && mayRetry(nt.reused.Load(), nt.answered.Load(), err) {
		r.Counters[stats.Retries]++
		nt.conns.Store(0)
		nt.reused.Store(false)
		if req.GetBody != nil {
			body, _ := req.GetBody()
			req = req.Clone(req.Context())
			req.Body = body
			r.BytesSent += req.ContentLength
		}
		resp, err = rt.RoundTrip(req)
	}
	if conns := nt.conns.Load(); conns > 1 { // GetConn once per attempt: net/http's own retries
		r.Counters[stats.Retries] += int64(conns - 1)
	}
	r.BytesRecv += nt.interim.Swap(0)
	return resp, err
}

// readNet reads resp's body to its end and judges the answer; false when
// the request failed.
func (d *Driver) readNet(ctx, rctx context.Context, st *vuState, resp *http.Response, r *driver.Result) bool {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Its body is the connection, in another protocol: closed, not read.
		resp.Body.Close()
		r.BytesRecv += headBytes(resp)
		d.judge(r, resp.StatusCode, reason(resp), nil, 0)
		return false
	}
	sink := &st.body
	sink.reset(-1, d.expectFails(resp.StatusCode)) // a body cut short is net/http's error
	// A body not read to its end is closed early, which closes an HTTP/1.1
	// connection and resets an HTTP/2 stream: neither is reused.
	_, err := sink.ReadFrom(resp.Body)
	resp.Body.Close()
	r.BytesRecv += headBytes(resp) + sink.n
	r.Counters[stats.BodyBytes] += sink.n
	if err != nil {
		st.net.stale = true
		r.Class, r.Message = d.classifyNet(err, ctx, rctx)
		r.Class = dial.BodyClass(r.Class)
		return false
	}
	d.judge(r, resp.StatusCode, reason(resp), sink.head, sink.n)
	return true
}

// redirectNet is the request resp sends req on to, as perflab's own
// client follows it (Driver.nextRequest), or nil.
func (d *Driver) redirectNet(req *http.Request, resp *http.Response, followed int) *http.Request {
	body := d.body
	if req.Body == nil {
		body = nil
	}
	next, body := d.nextRequest(req.URL, req.Method, body, resp.StatusCode, resp.Header.Get("Location"), followed)
	if next == nil {
		return nil
	}
	next = next.WithContext(req.Context())
	if len(body) > 0 {
		next.Body = &bodyReader{b: body}
	}
	return next
}

// headBytes is resp's status line and headers as HTTP/1.1 writes them.
func headBytes(resp *http.Response) int64 {
	n := len("HTTP/1.1 ") + len(resp.Status) + 4 // and two line breaks
	for name, values := range resp.Header {
		for _, v := range values {
			n += len(name) + len(": ") + len(v) + 2
		}
	}
	return int64(n)
}

// checkAnswer holds an answer net/http read to the rules of perflab's
// own parser (h1parse.go) that net/http does not keep itself: a status
// from 100 to 599, HTTP/1.0, HTTP/1.1 or HTTP/2, a line's length and the
// number of fields. Its headers' total is net/http's
// MaxResponseHeaderBytes, set to the same bound.
func checkAnswer(resp *http.Response) error {
	switch {
	case resp.StatusCode < 100 || resp.StatusCode > 599:
		resp.Body.Close()
		return fmt.Errorf("malformed HTTP status code %d (want 100 to 599)", resp.StatusCode)
	case resp.ProtoMajor == 1 && resp.ProtoMinor > 1, resp.ProtoMajor != 1 && resp.ProtoMajor != 2:
		resp.Body.Close()
		return fmt.Errorf("HTTP version %q is neither HTTP/1.0 nor HTTP/1.1", resp.Proto)
	}
	fields := 0
	for name, values := range resp.Header {
		for _, v := range values {
			if fields++; fields > maxHeaderFields {
				resp.Body.Close()
				return errTooManyFields
			}
			if len(name)+len(": ")+len(v)+2 > maxLineBytes {
				resp.Body.Close()
				return errLineTooLong
			}
		}
	}
	return nil
}

// reason is the reason phrase of resp's status line ("Not Found").
func reason(resp *http.Response) string {
	return strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" ")
}

// withTrace puts the VU's ClientTrace in ctx. httptrace composes it with a
// trace already in ctx by modifying it, so then a copy is used instead.
func withTrace(ctx context.Context, nt *netTrace) context.Context {
	trace := nt.trace
	if httptrace.ContextClientTrace(ctx) != nil {
		cp := *trace
		trace = &cp
	}
	return httptrace.WithClientTrace(ctx, trace)
}

// classifyNet is Classify plus the timeout's length in the message.
func (d *Driver) classifyNet(err error, parent, rctx context.Context) (stats.Class, string) {
	class, msg := dial.Classify(err, parent)
	if class == stats.Timeout && errors.Is(rctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		msg = timeoutMessage(d.timeout)
	}
	return class, msg
}

// bodyReader is the request body: a bytes.Reader with a no-op Close in one
// allocation. A fresh one per request, since net/http may still be reading
// the previous one after RoundTrip returned (the server may answer before
// it has read the whole request).
type bodyReader struct {
	b   []byte
	off int
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

func (b *bodyReader) Close() error { return nil }
