// Package httpdriver sends one configured HTTP request per operation, over
// HTTP/1.1, HTTP/2 over TLS or cleartext HTTP/2 (h2c), with keep-alive
// connections, and reports what happened as a driver.Result.
//
// What a Result holds, exactly:
//
//   - TTFB: from the start of Do to the first byte of the response, so it
//     includes any connect time (httptrace GotFirstResponseByte on
//     net/http, the first read returning bytes on fasthttp). Also set on a
//     failed request if a byte had come.
//   - Connect: TCP connect plus TLS handshake of a connection opened for
//     this request; 0 when the request reused a connection.
//   - BytesSent: request body bytes. Request line, headers and framing
//     (chunking, HTTP/2 frames, TLS records) are not counted.
//   - BytesRecv: response body bytes read (compression is disabled, so these
//     are the bytes the server sent as the body). Status line, headers and
//     framing are not counted. A body cut short counts what was read before
//     the failure (fasthttp reads bodies up to 32 KiB whole, so may report
//     0). Bodies are read through a fixed buffer per VU, whatever length a
//     server announces, and Config.Timeout bounds the body too.
//   - Class: stats.OK for 1xx–3xx (redirects are not followed), Status4xx
//     or Status5xx by status code, else what Classify makes of the error.
//   - Message: for a 4xx or 5xx, the status and the start of the body, if
//     it is text, on one line (at most 512 bytes of it: see statusMessage).
//
// Connections: with MaxConns 0 every VU has its own keep-alive connection
// (HTTP/1.1 and HTTP/2 alike), like wrk's connections, opened on its first
// request and reopened when the server closes it; the response body is read
// to the end so the connection is reused. A connection whose response was
// not read to its end (a timeout, an interrupt, a broken body) is closed,
// never reused: what the server writes later is no answer to the next
// request. With MaxConns > 0 the VUs share a pool of at most MaxConns
// connections (HTTP/2 multiplexes streams on them).
// Redirects are not followed, proxies from the environment not used.
//
// Three paths, chosen by measurement (CLIENT-CHOICE.md): HTTP/1.1 with a
// connection per VU goes through fasthttp, which costs well under half the
// CPU per request of net/http; HTTP/2, ALPN negotiation, shared connection
// pools (MaxConns > 0) go through net/http. In the closed model, plain
// http:// with a connection per VU goes through event loops of perflab's
// own (loop.go: no goroutine per VU, one read per answer, as wrk). All
// report the same things the same way, and the tests run every case on
// each.
package httpdriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Closer = (*Driver)(nil)
)

// idleConnTimeout closes a keep-alive connection left idle this long.
const idleConnTimeout = 90 * time.Second

// Driver sends the request of its Config. It is safe for concurrent use by
// many VUs; calls to Do with the same vu must not overlap (a VU runs one
// operation at a time).
type Driver struct {
	name    string
	body    []byte
	secrets []string // of the request, cut from error samples (cutSecret)
	timeout time.Duration
	tmpl    *http.Request   // copied by every net/http Do
	rt      *http.Transport // shared: MaxConns > 0, or vu < 0
	perVU   bool            // MaxConns == 0: each VU its own client
	fast    *fastTemplate   // non-nil: HTTP/1.1 through fasthttp
	loop    *loopTemplate   // non-nil: the closed model may run through loops (loop.go)
	viaLoop bool            // tests only: Do runs through a loop
	dl      *dial.Dialer
	states  driver.VUs[vuState]
}

// New validates c and builds a Driver.
func New(c Config) (*Driver, error) {
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid http driver config: %w", errors.Join(errs...))
	}
	c = c.withDefaults()
	tmpl, err := newTemplate(c)
	if err != nil {
		return nil, err
	}
	dl, err := newDialer(c)
	if err != nil {
		return nil, err
	}
	d := &Driver{
		name:    c.Name,
		body:    c.Body,
		secrets: requestSecrets(tmpl.Header),
		timeout: c.Timeout,
		tmpl:    tmpl,
		rt:      newTransport(c, dl),
		perVU:   c.MaxConns == 0,
		viaLoop: c.viaLoop,
		dl:      dl,
	}
	if useFast(c) {
		d.fast = newFastTemplate(tmpl, c.Body)
		if d.loop, err = newLoopTemplate(d, d.fast); err != nil {
			return nil, err
		}
		d.viaLoop = d.viaLoop && d.loop != nil
	}
	epoch := time.Now()
	d.states.New = func(vu int) *vuState {
		s := newVUState(epoch)
		if vu >= 0 { // a negative VU's throwaway state uses the shared client
			d.setupVU(s)
		}
		return s
	}
	return d, nil
}

// setupVU gives a VU seen for the first time its own client.
func (d *Driver) setupVU(st *vuState) {
	switch {
	case d.fast != nil:
		st.fast = newFastClient(d.fast, d.dl, st, d.timeout)
	case d.perVU:
		// One connection, exactly: with no cap, net/http may dial a second
		// one for a request that comes before the first is back in the
		// pool, which happens with h2c.
		st.rt = d.rt.Clone()
		st.rt.MaxConnsPerHost, st.rt.MaxIdleConnsPerHost = 1, 1
	}
}

// Close closes the idle connections. Call it after the last Do returned.
func (d *Driver) Close() error {
	d.rt.CloseIdleConnections()
	d.states.Each(func(st *vuState) {
		if st.rt != nil {
			st.rt.CloseIdleConnections()
		}
		if st.fast != nil {
			st.fast.hc.CloseIdleConnections()
		}
		if st.loop != nil {
			_ = st.loop.Close()
		}
	})
	return nil
}

// Do sends one request and fills in r. A ctx done before or during the
// request is stats.Interrupted; the driver's own timeout is stats.Timeout.
// A negative vu uses the shared net/http client.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	st := d.states.Get(vu)
	start := st.begin()
	*r = driver.Result{Op: d.name}
	if d.viaLoop && vu >= 0 {
		d.doInLoop(ctx, st, vu, r)
		return
	}
	if st.fast != nil {
		st.fast.do(ctx, d, start, r)
		return
	}
	d.doNet(ctx, st, start, r)
}

func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("request timed out after %v", d)
}

// BodyClass is the class of an error met while reading a response body,
// given what Classify made of it: a connection that broke after the
// response began is a protocol failure, not a failure to connect.
func BodyClass(class stats.Class) stats.Class {
	if class == stats.Connect {
		return stats.Protocol
	}
	return class
}
