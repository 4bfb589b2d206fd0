package httpdriver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/valyala/fasthttp"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// The HTTP/1.1 path. Measured against wrk, fasthttp costs well under half
// the CPU per request of net/http (CLIENT-CHOICE.md), so HTTP/1.1 with one
// connection per VU goes through it; HTTP/2, ALPN and shared pools stay on
// net/http, which fasthttp cannot do.
//
// Each VU has its own fasthttp.HostClient holding at most one keep-alive
// connection, dialed by our dialer. The connection wrapper stamps the first
// response byte (TTFB) and lets a cancelled ctx cut the request short by
// moving the connection's deadline into the past.

// errServerClosed replaces fasthttp's ErrConnectionClosed, whose message
// is a paragraph.
var errServerClosed = errors.New("server closed the connection before the response")

// alreadyPassed is a deadline that has passed: it makes pending reads and
// writes on a connection return at once.
var alreadyPassed = time.Unix(1, 0)

// useFast tells whether c's requests go through the fasthttp path.
func useFast(c Config) bool {
	u, err := url.Parse(c.URL)
	if err != nil || c.MaxConns != 0 {
		return false
	}
	return c.Proto == ProtoH1 || (c.Proto == ProtoAuto && u.Scheme == "http")
}

// fastTemplate is what every VU's fastClient is built from.
type fastTemplate struct {
	tmpl     *http.Request // the net/http template: URL, Host, Header
	body     []byte
	addr     string // host:port
	isTLS    bool
	writeBuf int // the size of a VU's write buffer (writeBufSize)
}

func newFastTemplate(tmpl *http.Request, body []byte) *fastTemplate {
	t := &fastTemplate{tmpl: tmpl, body: body, addr: canonicalAddr(tmpl.URL), isTLS: tmpl.URL.Scheme == "https"}
	t.writeBuf = t.writeBufSize()
	return t
}

// Bounds of a VU's write buffer; the upper one is fasthttp's default.
const (
	minWriteBuf = 512
	maxWriteBuf = 4 << 10
)

// writeBufSize is the write buffer a VU needs: its request, headers and
// body, with room for the framing fasthttp adds, between minWriteBuf and
// maxWriteBuf. A request that fits is sent in one write, as with a larger
// buffer; a larger body is written through, not copied. Every VU keeps its
// buffer while it is busy, so a GET's 4 KiB default, mostly unused, is
// 4 MiB over a thousand VUs.
func (t *fastTemplate) writeBufSize() int {
	var req fasthttp.Request
	t.build(&req)
	// equivalent mutants: either + made -; the buffer's size sets how many
	// writes a request takes, never the bytes sent or any figure measured.
	n := len(req.Header.Header()) + len(t.body) + 64
	return min(max(n, minWriteBuf), maxWriteBuf)
}

// build makes req the configured request. The body is shared, not copied.
func (t *fastTemplate) build(req *fasthttp.Request) {
	req.Header.DisableNormalizing() // send names as given, like net/http
	req.Header.SetNoDefaultContentType(true)
	req.URI().DisablePathNormalizing = true
	req.SetRequestURI(t.tmpl.URL.String())
	req.Header.SetMethod(t.tmpl.Method)
	for name, values := range t.tmpl.Header {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	req.UseHostHeader = true
	req.Header.SetHost(t.tmpl.Host)
	req.SetBodyRaw(t.body) // of no bytes, the body stays empty
}

// canonicalAddr is u's host:port, with the scheme's default port if none.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// fastClient is one VU's HTTP/1.1 client. Only the VU's goroutine uses it,
// except what interrupt touches: conn, and the fields under mu.
type fastClient struct {
	hc     *fasthttp.HostClient
	req    fasthttp.Request
	resp   fasthttp.Response
	st     *vuState
	dl     *dial.Dialer
	addr   string
	slack  time.Duration   // how much later than asked its connections' deadlines may fall
	ctx    context.Context // of the request in flight, for dialing
	dialed bool            // this attempt opened a new connection
	conn   atomic.Pointer[fastConn]

	watched context.Context // the ctx whose end interrupts requests; only the VU's goroutine reads it

	mu          sync.Mutex
	gen         uint64      // watch generation, so a late interrupt from a replaced ctx is ignored
	stopWatch   func() bool // unregisters the watch on watched
	interrupted atomic.Bool // watched is done: every deadline stays past
}

func newFastClient(t *fastTemplate, dl *dial.Dialer, st *vuState, timeout time.Duration) *fastClient {
	fc := &fastClient{st: st, dl: dl, addr: t.addr, slack: timeout / deadlineSlack}
	t.build(&fc.req)
	// With StreamResponseBody and MaxResponseBodySize, a body over
	// wholeBodyMax, or of unknown length, streams through the VU's buffer:
	// an announced Content-Length sizes no allocation.
	fc.hc = &fasthttp.HostClient{
		Addr:                          t.addr,
		IsTLS:                         t.isTLS,
		MaxConns:                      1,
		MaxConnWaitTimeout:            timeout,
		MaxIdleConnDuration:           idleConnTimeout,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		StreamResponseBody:            true,
		MaxResponseBodySize:           wholeBodyMax,
		WriteBufferSize:               t.writeBuf,
		DialTimeout:                   fc.dial,
		RetryIfErr:                    fc.retry,
	}
	return fc
}

// dial opens the VU's connection with our dialer (the same as net/http's,
// so Connect means the same) under the request's ctx.
func (fc *fastClient) dial(_ string, timeout time.Duration) (net.Conn, error) {
	var (
		c   net.Conn
		err error
	)
	ctx, cancel := context.WithTimeout(fc.ctx, timeout)
	defer cancel()
	if fc.hc.IsTLS {
		c, err = fc.dl.DialTLS(ctx, "tcp", fc.addr)
	} else {
		c, err = fc.dl.Dial(ctx, "tcp", fc.addr)
	}
	if err != nil {
		return nil, err
	}
	fc.dialed = true
	fc.st.connect.Store(int64(dial.ClaimConnect(c)))
	conn := &fastConn{Conn: c, fc: fc}
	fc.conn.Store(conn)
	return conn, nil
}

// retry allows what net/http allows: one more attempt of a replayable
// request when a reused keep-alive connection failed before any response
// byte (the server closed it while idle). Anything else is reported, not
// hidden behind retries.
func (fc *fastClient) retry(req *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	var timeout interface{ Timeout() bool }
	if attempts > 1 || fc.dialed || fc.interrupted.Load() || fc.st.firstByte.Load() != 0 ||
		(errors.As(err, &timeout) && timeout.Timeout()) || !replayable(req) {
		return false, false
	}
	return false, true
}

func replayable(req *fasthttp.Request) bool {
	h := &req.Header
	return h.IsGet() || h.IsHead() || h.IsOptions() || h.IsTrace() ||
		len(h.Peek("Idempotency-Key")) > 0 || len(h.Peek("X-Idempotency-Key")) > 0
}

// do sends the VU's request and fills in r (Op is set by the caller).
func (fc *fastClient) do(ctx context.Context, d *Driver, start int64, r *driver.Result) {
	if err := ctx.Err(); err != nil {
		r.Class, r.Message = stats.Interrupted, err.Error()
		return
	}
	fc.watch(ctx)
	fc.ctx, fc.dialed = ctx, false
	r.BytesSent = int64(len(d.body))

	var err error
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d.timeout {
		err = fc.hc.DoDeadline(&fc.req, &fc.resp, dl) // its expiry is the engine's: Interrupted
	} else {
		err = fc.hc.DoTimeout(&fc.req, &fc.resp, d.timeout) // reads the clock once, where a deadline is a read more
	}
	r.Connect = time.Duration(fc.st.connect.Load())
	fc.ctx = nil
	if err != nil {
		r.TTFB = fc.st.ttfb(start, 0) // a byte may have come before the failure
		r.Class, r.Message = d.classifyFast(err, ctx)
		return
	}
	r.TTFB = fc.st.ttfb(start, time.Duration(fc.st.now()-start)) // equivalent mutants of the fallback: a response read had its first byte stamped, so it is never taken
	status := fc.resp.StatusCode()
	sink := &fc.st.body
	sink.reset(int64(fc.resp.Header.ContentLength()), status >= 400)
	// BodyWriteTo reads through the sink's buffer (it is an io.ReaderFrom)
	// and returns the connection to the HostClient only if the body was
	// read to its end; on an error it closes it.
	err = fc.resp.BodyWriteTo(sink)
	r.BytesRecv = sink.n
	switch {
	case err != nil:
		r.Class, r.Message = d.classifyFast(err, ctx)
		r.Class = BodyClass(r.Class)
	case status >= 500:
		r.Class, r.Message = stats.Status5xx, statusMessage(status, string(fc.resp.Header.StatusMessage()), sink.head, sink.n, d.secrets)
	case status >= 400:
		r.Class, r.Message = stats.Status4xx, statusMessage(status, string(fc.resp.Header.StatusMessage()), sink.head, sink.n, d.secrets)
	}
}

// watch arranges for the request in flight to be interrupted when ctx is
// done. A VU's requests normally share one ctx (the engine's), so the
// watcher is registered once, not per request; a different ctx replaces
// it, and the generation number makes a late call from the old one a no-op.
func (fc *fastClient) watch(ctx context.Context) {
	if ctx == fc.watched || ctx.Done() == nil && fc.watched == nil {
		return
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.stopWatch != nil {
		fc.stopWatch()
		fc.stopWatch = nil
	}
	fc.gen++ // equivalent mutant: --, a new generation is all it needs to be
	fc.watched = ctx
	fc.interrupted.Store(false)
	if ctx.Done() != nil {
		gen := fc.gen
		fc.stopWatch = context.AfterFunc(ctx, func() { fc.interrupt(gen) })
	}
}

// interrupt runs when the watched ctx of generation gen is done: the VU's
// connection deadline moves into the past so fasthttp returns at once, and
// stays there, whatever deadline fasthttp sets next (see fastConn).
func (fc *fastClient) interrupt(gen uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if gen != fc.gen {
		return // that ctx is no longer watched
	}
	fc.interrupted.Store(true)
	if c := fc.conn.Load(); c != nil {
		_ = c.past()
	}
}

func (d *Driver) classifyFast(err error, parent context.Context) (stats.Class, string) {
	if errors.Is(err, fasthttp.ErrConnectionClosed) {
		err = errServerClosed
	}
	class, msg := Classify(err, parent)
	if class == stats.Timeout && parent.Err() == nil {
		msg = timeoutMessage(d.timeout)
	}
	return class, msg
}

// fastConn stamps the first response byte of each request for TTFB, and
// keeps an interrupted request's deadlines in the past: fasthttp sets the
// read deadline after writing, which could undo an interrupt that came
// during the write. Setting the deadline, then checking the flag, leaves
// it past whichever of interrupt and fasthttp goes first.
//
// It also moves the connection's deadline less often than fasthttp asks:
// fasthttp sets a write and a read deadline for every request, each a
// runtime timer update (3 % of the closed loop's CPU against nginx). One
// deadline serves both directions, set slack past the one asked for and
// kept while later requests ask for no later: a request's time limit ends
// up between its timeout and the timeout plus slack.
type fastConn struct {
	net.Conn
	fc    *fastClient
	armed atomic.Int64 // the deadline now set (Unix ns); 0 when none is known
}

// deadlineSlack is how much later than asked a request's deadline may
// fall: 1/64 of its timeout.
const deadlineSlack = 64

func (c *fastConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if st := c.fc.st; n > 0 && st.firstByte.Load() == 0 {
		st.firstByte.Store(st.now())
	}
	return n, err
}

func (c *fastConn) SetDeadline(t time.Time) error      { return c.setDeadline(t) }
func (c *fastConn) SetReadDeadline(t time.Time) error  { return c.setDeadline(t) }
func (c *fastConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t) }

func (c *fastConn) setDeadline(t time.Time) error {
	if c.fc.interrupted.Load() {
		return c.past()
	}
	if t.IsZero() { // no deadline
		c.armed.Store(0)
		return c.Conn.SetDeadline(t)
	}
	ns := t.UnixNano()
	slack := c.fc.slack
	if armed := c.armed.Load(); armed >= ns && armed-ns <= int64(slack) {
		return nil
	}
	later := t.Add(slack)
	err := c.Conn.SetDeadline(later)
	c.armed.Store(later.UnixNano())
	if c.fc.interrupted.Load() { // an interrupt between the first look and now
		return c.past()
	}
	return err
}

// past moves the deadline into the past and forgets the one set before,
// so that the next deadline asked for is set.
func (c *fastConn) past() error {
	c.armed.Store(0)
	return c.Conn.SetDeadline(alreadyPassed)
}

// Handshake tells fasthttp that TLS, if any, is done: our dialer did it.
func (c *fastConn) Handshake() error { return nil }
