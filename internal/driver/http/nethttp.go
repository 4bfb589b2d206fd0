package httpdriver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// The net/http path: HTTP/2 (TLS and h2c), ALPN negotiation, shared pools.
// TTFB and connection reuse come from httptrace, on a ClientTrace the VU
// reuses; connect time from the dialer (see timedConn).

func (d *Driver) doNet(ctx context.Context, st *vuState, start int64, r *driver.Result) {
	rctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req := d.tmpl.WithContext(withTrace(rctx, st))
	if len(d.body) > 0 { // equivalent mutant: >= 0; net/http probes a Body of no announced length and sends none when it is empty
		req.Body = &bodyReader{b: d.body}
		r.BytesSent = int64(len(d.body))
	}
	rt := d.rt
	if st.rt != nil {
		rt = st.rt
	}

	resp, err := rt.RoundTrip(req)
	r.Connect = time.Duration(st.connect.Load())
	if err != nil {
		r.TTFB = st.ttfb(start, 0) // a byte may have come before the failure
		r.Class, r.Message = d.classifyNet(err, ctx, rctx)
		return
	}
	r.TTFB = st.ttfb(start, time.Duration(st.now()-start)) // equivalent mutants of the fallback: a response read had its first byte stamped, so it is never taken
	sink := &st.body
	sink.reset(-1, resp.StatusCode >= 400) // a body cut short is net/http's error
	// A body not read to its end is closed early, which closes an HTTP/1.1
	// connection and resets an HTTP/2 stream: neither is reused.
	_, err = sink.ReadFrom(resp.Body)
	resp.Body.Close()
	r.BytesRecv = sink.n
	switch {
	case err != nil:
		r.Class, r.Message = d.classifyNet(err, ctx, rctx)
		r.Class = BodyClass(r.Class)
	case resp.StatusCode >= 500:
		r.Class, r.Message = stats.Status5xx, statusMessage(resp.StatusCode, reason(resp), sink.head, sink.n, d.secrets)
	case resp.StatusCode >= 400:
		r.Class, r.Message = stats.Status4xx, statusMessage(resp.StatusCode, reason(resp), sink.head, sink.n, d.secrets)
	}
}

// reason is the reason phrase of resp's status line ("Not Found").
func reason(resp *http.Response) string {
	return strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" ")
}

// withTrace puts the VU's ClientTrace in ctx. httptrace composes it with a
// trace already in ctx by modifying it, so then a copy is used instead.
func withTrace(ctx context.Context, st *vuState) context.Context {
	trace := st.trace
	if httptrace.ContextClientTrace(ctx) != nil {
		cp := *trace
		trace = &cp
	}
	return httptrace.WithClientTrace(ctx, trace)
}

// classifyNet is Classify plus the timeout's length in the message.
func (d *Driver) classifyNet(err error, parent, rctx context.Context) (stats.Class, string) {
	class, msg := Classify(err, parent)
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
