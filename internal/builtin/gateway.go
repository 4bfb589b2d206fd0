package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// GatewayConfig describes the built-in gateway.
type GatewayConfig struct {
	// Upstream is the base URL requests are forwarded to, e.g.
	// http://127.0.0.1:8080: http, on a loopback host. Its path, if any,
	// is put before each request's path.
	Upstream string
	// Delay is added to every request before it is forwarded: a gateway
	// with a known overhead, to check the measurement of one.
	Delay time.Duration
	// HoldFirst holds the first piece of every answer this long before
	// passing it on, as a gateway that buffers the start of a stream
	// does: it adds to the time to first token, and to the whole answer
	// only what the pieces after it cannot make up.
	HoldFirst time.Duration
}

// Validate lists every problem with the configuration at once.
func (c GatewayConfig) Validate() []error {
	var errs []error
	if c.Delay < 0 {
		errs = append(errs, fmt.Errorf("delay %v must be >= 0", c.Delay))
	}
	if c.HoldFirst < 0 {
		errs = append(errs, fmt.Errorf("hold-first %v must be >= 0", c.HoldFirst))
	}
	if _, err := upstreamURL(c.Upstream); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// upstreamURL parses an upstream URL and keeps it on loopback: the gateway
// is a test fixture and never forwards load to other machines.
func upstreamURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("an upstream URL is required, e.g. http://127.0.0.1:8080")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("cannot parse upstream %q: %w", s, err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want http://HOST:PORT", s)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("upstream %q: %w; the built-in gateway forwards to 127.0.0.1, [::1] or localhost only", s, ErrNotLoopback)
	}
	return u, nil
}

// Gateway is the built-in gateway: a reverse proxy that waits a fixed
// delay (slept, then spun for its last 0.2 ms: package clock) before it
// forwards each request to its upstream over keep-alive connections,
// streams the request's body on and the answer back as they come
// (server-sent events included) and answers 502 when the upstream cannot
// be reached. It serves its own /metrics and /health; every other path is
// forwarded.
//
// It is net/http on both sides: a handler that sends each request through
// a Transport of its own and relays the answer a read at a time, each
// read flushed. httputil.ReverseProxy does the same with more work per
// request (a deep copy of its headers, a trace of each round trip) and
// measured slower. Against the fasthttp gateway it replaced, the hop
// costs about 14 µs more CPU per request (BenchmarkGatewayHop on one
// core: the Transport's connection goroutines, the server's background
// read, a request body written apart from its headers), and about 0.08 ms
// more at p50 in TestGatewayOverheadBuiltin (0.25 against 0.17 ms,
// medians of 20 and 9 runs; BENCHMARKS.md).
type Gateway struct {
	delay     time.Duration
	hold      time.Duration // before the first piece of an answer
	clock     answerClock   // times the delay and the hold
	upstream  *url.URL      // scheme and host; path the prefix put before each request's
	transport *http.Transport
	metrics   *gatewayMetrics
}

var _ http.Handler = (*Gateway)(nil)

// upstreamTimeout bounds the wait for the upstream's answer to begin: a
// model may think a while, a stuck upstream must not hold a client forever.
const upstreamTimeout = 10 * time.Minute

// NewGateway returns the gateway for cfg, or cfg's problems.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid gateway: %w", errors.Join(errs...))
	}
	up, _ := upstreamURL(cfg.Upstream)
	base := &url.URL{Scheme: "http", Host: up.Host, Path: strings.TrimSuffix(up.Path, "/")}
	if up.RawPath != "" {
		base.RawPath = strings.TrimSuffix(up.RawPath, "/")
	}
	return &Gateway{
		delay:    cfg.Delay,
		hold:     cfg.HoldFirst,
		clock:    spinClock{},
		upstream: base,
		metrics:  newGatewayMetrics(),
		transport: &http.Transport{
			Proxy:                 nil, // loopback only: never the environment's proxy
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   4096, // one per client connection in flight, so none is closed after use
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: upstreamTimeout,
			DisableCompression:    true, // bodies pass as they are
		},
	}, nil
}

// Close closes the idle connections to the upstream.
func (g *Gateway) Close() { g.transport.CloseIdleConnections() }

// Serve serves the gateway on ln until ctx is done, then stops accepting,
// lets in-flight requests finish for up to shutdownGrace and closes ln.
// A clean shutdown returns nil.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	return serveHTTP(ctx, ln, &http.Server{
		Handler:           g,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       90 * time.Second,
	})
}

// ServeHTTP answers /metrics and /health itself and forwards the rest.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		g.metrics.handler.ServeHTTP(w, r)
		return
	case "/health":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "OK")
		return
	}
	began := g.clock.now()
	m := g.metrics
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	if g.delay > 0 && !sleepUntil(r.Context(), g.clock, began.Add(g.delay)) {
		m.canceled.Inc()
		return
	}
	if d, ok := w.(interface{ EnableFullDuplex() error }); ok {
		// The answer may begin before the request's body has all come;
		// without this the server would drop the rest of the body then.
		_ = d.EnableFullDuplex()
	}
	resp, err := g.transport.RoundTrip(g.outgoing(r))
	if err != nil {
		if r.Context().Err() != nil {
			m.canceled.Inc()
			return
		}
		m.upstreamErrors.Inc()
		http.Error(w, "perflab gateway: cannot reach the upstream: "+err.Error(), http.StatusBadGateway)
		g.done(http.StatusBadGateway, began)
		return
	}
	defer resp.Body.Close()
	copyEndToEnd(w.Header(), resp.Header)
	if _, ok := resp.Header["Content-Type"]; !ok {
		w.Header()["Content-Type"] = nil // the upstream's answer, not one sniffed
	}
	w.WriteHeader(resp.StatusCode)
	err = g.relay(r.Context(), w, resp)
	g.done(resp.StatusCode, began)
	if err != nil {
		// The client must not take a broken answer for a whole one.
		panic(http.ErrAbortHandler)
	}
}

// outgoing returns the upstream copy of the client's request r: the same
// method, end-to-end headers and body, the upstream's host and path
// prefix. The header values are shared with r's, not copied: neither
// side changes them.
func (g *Gateway) outgoing(r *http.Request) *http.Request {
	out := r.WithContext(r.Context()) // a shallow copy
	u := *g.upstream
	u.Path += r.URL.Path
	if r.URL.RawPath != "" || u.RawPath != "" {
		u.RawPath = g.upstream.EscapedPath() + r.URL.EscapedPath()
	}
	u.RawQuery = r.URL.RawQuery
	out.URL, out.Host, out.RequestURI = &u, "", ""
	out.Header = make(http.Header, len(r.Header))
	copyEndToEnd(out.Header, r.Header)
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = noUserAgent
	}
	out.Close, out.TransferEncoding, out.Trailer = false, nil, nil
	if r.ContentLength == 0 {
		out.Body = nil // nothing to send, and the Transport may retry
	} else {
		// The Transport closes what it sent; the server owns r.Body.
		out.Body = io.NopCloser(r.Body)
	}
	return out
}

// noUserAgent keeps the Transport from naming itself when the client sent
// no User-Agent.
var noUserAgent = []string{""}

// hopHeaders are the hop-by-hop headers (RFC 9110, 7.6.1) a proxy does
// not forward, besides those its Connection header names.
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Proxy-Authenticate": true, "Proxy-Authorization": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true}

// copyEndToEnd puts src's end-to-end headers in dst, sharing their values.
func copyEndToEnd(dst, src http.Header) {
	named := src["Connection"]
	for k, v := range src {
		if hopHeaders[k] || len(named) > 0 && connectionNames(named, k) {
			continue
		}
		dst[k] = v
	}
}

// connectionNames reports whether the Connection header values named
// list the header key.
func connectionNames(named []string, key string) bool {
	for _, v := range named {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), key) {
				return true
			}
		}
	}
	return false
}

// relay passes the upstream's answer on to the client a read at a time,
// each flushed, so that every piece (a token of a stream, a part of a
// long body) reaches the client as it comes; one read, one write. It
// counts a client gone or an upstream failing midway, and reports either.
// With a hold, the first piece waits that long; what came meanwhile
// follows in the next reads.
func (g *Gateway) relay(ctx context.Context, w http.ResponseWriter, resp *http.Response) error {
	f, _ := w.(interface{ FlushError() error })
	bp := relayBuffers.Get().(*[]byte)
	defer relayBuffers.Put(bp)
	first := true
	for {
		n, rerr := resp.Body.Read(*bp)
		if n > 0 && first && g.hold > 0 && !sleep(ctx, g.clock, g.hold) {
			g.metrics.canceled.Inc()
			return ctx.Err()
		}
		first = first && n == 0
		if n > 0 {
			_, werr := w.Write((*bp)[:n])
			if werr == nil && f != nil {
				werr = f.FlushError()
			}
			if werr != nil {
				g.metrics.canceled.Inc()
				return werr
			}
		}
		if rerr == io.EOF {
			for k, v := range resp.Trailer {
				w.Header()[http.TrailerPrefix+k] = v
			}
			return nil
		}
		if rerr != nil {
			g.metrics.upstreamErrors.Inc()
			return rerr
		}
	}
}

// relayBuffers holds relay's read buffers, one per answer in flight.
var relayBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// done counts a forwarded request once its answer is complete.
func (g *Gateway) done(code int, began time.Time) {
	m := g.metrics
	m.byCode(code).Inc()
	m.duration.Observe(g.clock.now().Sub(began).Seconds())
}

// gatewayMetrics is what the gateway tells a scraper about itself, in its
// own registry (see targetMetrics).
type gatewayMetrics struct {
	requests       *prometheus.CounterVec
	canceled       prometheus.Counter
	upstreamErrors prometheus.Counter
	duration       prometheus.Histogram
	inFlight       prometheus.Gauge
	handler        http.Handler
	codes          [500]atomic.Pointer[prometheus.Counter] // requests' counters for codes 100-599, made on first use
}

// byCode returns the requests counter for code; a code seen before costs
// no allocation.
func (m *gatewayMetrics) byCode(code int) prometheus.Counter {
	if code < 100 || code >= 100+len(m.codes) {
		return m.requests.WithLabelValues(strconv.Itoa(code))
	}
	p := &m.codes[code-100]
	if c := p.Load(); c != nil {
		return *c
	}
	c := m.requests.WithLabelValues(strconv.Itoa(code))
	p.Store(&c)
	return c
}

func newGatewayMetrics() *gatewayMetrics {
	m := &gatewayMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perflab_gateway_requests_total",
			Help: "Requests forwarded by the gateway, by the HTTP status code of the answer.",
		}, []string{"code"}),
		canceled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_gateway_canceled_requests_total",
			Help: "Requests whose client went away before the gateway answered.",
		}),
		upstreamErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_gateway_upstream_errors_total",
			Help: "Requests the upstream could not answer (answered 502).",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "perflab_gateway_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, delay included.",
			Buckets: durationBuckets,
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "perflab_gateway_in_flight_requests",
			Help: "Requests the gateway is currently holding or forwarding.",
		}),
	}
	m.requests.WithLabelValues("200") // read 0 rather than absent
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.canceled, m.upstreamErrors, m.duration, m.inFlight,
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}
