// Package httpdriver sends one configured HTTP request per operation, over
// HTTP/1.1, HTTP/2 over TLS or cleartext HTTP/2 (h2c), with keep-alive
// connections, and reports what happened as a driver.Result.
//
// What a Result holds, exactly:
//
//   - TTFB: from the start of Do to the first byte of any answer: an
//     interim (1xx) answer's, or with redirects followed, the first
//     answer's (as curl and net/http's httptrace count it). It includes
//     any connect time. Also set on a failed request if a byte had come.
//   - Connect: TCP connect plus TLS handshake of the connections opened
//     for this request; 0 when it reused one.
//   - BytesSent: request body bytes.
//   - BytesRecv: the answers' bytes as they came: status lines, headers,
//     framing (chunk sizes, trailers) and body, interim answers and
//     redirects followed included. On HTTP/2 (net/http), the status line
//     and header lines as HTTP/1.1 would write them, and the body.
//     Counters[stats.BodyBytes] is the body bytes alone. Bodies are read
//     through a fixed buffer, whatever length a server announces, and
//     Config.Timeout bounds the body too.
//   - Class: the final answer read whole, by its status: stats.OK when
//     Config.ExpectStatus has it (200–399 by default); else RateLimited
//     (429), Status4xx, Status5xx, or StatusOther (a 1xx, 2xx or 3xx not
//     expected). An answer not read whole is what Classify makes of the
//     error: a body cut short, a malformed answer or one past a bound
//     (h1parse.go) is Protocol.
//   - Message: for a status that failed, the status and the start of the
//     body, if it is text, on one line (at most 512 bytes of it: see
//     statusMessage).
//   - Counters: stats.BodyBytes; stats.Retries, requests sent again on a
//     new connection (rules.go); stats.IdleCloses, kept-alive connections
//     the server had closed when they were to be reused; stats.StrayAnswers,
//     connections closed for bytes no request asked for. net/http counts
//     retries only (README says which rules it cannot follow).
//
// Connections: with MaxConns 0 every VU has its own keep-alive connection
// (HTTP/1.1 and HTTP/2 alike), like wrk's connections, opened on its first
// request and reopened when the server closes it; the answer is read to
// its end so the connection is reused. A connection whose answer was not
// read whole (a timeout, an interrupt, a broken body) is closed, never
// reused: what the server writes later is no answer to the next request.
// With MaxConns > 0 the VUs share a pool of at most MaxConns connections
// (HTTP/2 multiplexes streams on them). Redirects are followed up to
// Config.FollowRedirects (0: none); proxies from the environment not used.
//
// Paths (CLIENT-CHOICE.md): HTTP/1.1 with a connection per VU goes
// through perflab's own client (h1.go): event loops in the closed model,
// the VU's goroutine otherwise; HTTP/2, ALPN negotiation and shared pools
// go through net/http. All report the same things the same way, and the
// tests run every case on each.
package httpdriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/perflab/perflab/internal/driver"
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
	h1      *h1Template     // non-nil: HTTP/1.1 through perflab's own client
	expect  StatusSet       // the final statuses that are a success
	follow  int             // redirects to follow
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
	expect, err := ParseStatusSet(c.ExpectStatus)
	if err != nil {
		return nil, err
	}
	d := &Driver{
		name:    c.Name,
		expect:  expect,
		follow:  c.FollowRedirects,
		body:    c.Body,
		secrets: requestSecrets(tmpl.Header),
		timeout: c.Timeout,
		tmpl:    tmpl,
		rt:      newTransport(c, dl),
		perVU:   c.MaxConns == 0,
		viaLoop: c.viaLoop,
		dl:      dl,
	}
	if ownsH1(c) {
		d.h1 = newH1Template(d, dl)
	}
	d.viaLoop = d.viaLoop && d.loops()
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
	case d.h1 != nil:
		st.h1 = newH1Client(d.h1, st)
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
		if st.h1 != nil {
			st.h1.Close()
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
	if st.h1 != nil {
		st.h1.do(ctx, start, r)
		return
	}
	d.doNet(ctx, st, start, r)
}

func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("request timed out after %v", d)
}

// expectFails tells whether an answer of status code fails the request:
// its body's start and reason phrase are then kept for the message.
func (d *Driver) expectFails(code int) bool { return !d.expect.Has(code) }
