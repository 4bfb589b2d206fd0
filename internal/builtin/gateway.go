package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

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
}

// Validate lists every problem with the configuration at once.
func (c GatewayConfig) Validate() []error {
	var errs []error
	if c.Delay < 0 {
		errs = append(errs, fmt.Errorf("delay %v must be >= 0", c.Delay))
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
// delay (slept, then spun for its last 0.2 ms: package clock) before it forwards each request
// to its upstream over keep-alive connections, streams the answer back as
// it comes (server-sent events included) and answers 502 when the
// upstream cannot be reached. It serves its own /metrics and /health;
// every other path is forwarded.
//
// It is built on fasthttp on both sides, as LLM gateways such as Bifrost
// are: the goroutine that reads a client's request also writes it
// upstream and reads the answer, with no hand-off to connection
// goroutines (net/http's server and transport cost three or four
// goroutine wake-ups per request, about 0.4 ms on a shared 2-core
// machine), so what the gateway adds beyond its delay stays small.
type Gateway struct {
	delay    time.Duration
	clock    answerClock // times the delay
	base     []byte      // the upstream URL's path, put before each request's
	upstream *fasthttp.HostClient
	metrics  *gatewayMetrics
	scrape   fasthttp.RequestHandler
}

// hopHeaders are the hop-by-hop headers (RFC 9110, 7.6.1) a proxy does not
// forward; fasthttp keeps Connection and Transfer-Encoding itself.
var hopHeaders = []string{"Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Upgrade"}

// upstreamTimeout bounds one exchange with the upstream: a stream of
// tokens may last minutes, a stuck upstream must not hold a client forever.
const upstreamTimeout = 10 * time.Minute

// NewGateway returns the gateway for cfg, or cfg's problems.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid gateway: %w", errors.Join(errs...))
	}
	up, _ := upstreamURL(cfg.Upstream)
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	g := &Gateway{
		delay:   cfg.Delay,
		clock:   spinClock{},
		base:    []byte(strings.TrimSuffix(up.EscapedPath(), "/")),
		metrics: newGatewayMetrics(),
		upstream: &fasthttp.HostClient{
			Addr:                          up.Host,
			Dial:                          func(addr string) (net.Conn, error) { return dialer.Dial("tcp", addr) },
			MaxConns:                      4096, // one per client connection in flight
			MaxIdleConnDuration:           90 * time.Second,
			ReadTimeout:                   upstreamTimeout,
			WriteTimeout:                  upstreamTimeout,
			StreamResponseBody:            true, // chunked answers (SSE) pass through as they come
			DisableHeaderNamesNormalizing: true,
			DisablePathNormalizing:        true,
			NoDefaultUserAgentHeader:      true,
		},
	}
	g.scrape = fasthttpadaptor.NewFastHTTPHandler(g.metrics.handler)
	return g, nil
}

// Close closes the idle connections to the upstream.
func (g *Gateway) Close() { g.upstream.CloseIdleConnections() }

// Serve serves the gateway on ln until ctx is done, then stops accepting,
// lets in-flight requests finish for up to shutdownGrace and closes ln.
// A clean shutdown returns nil.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	srv := &fasthttp.Server{
		Handler:                       g.serve,
		Name:                          "perflab-gateway",
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		NoDefaultDate:                 true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		ReadTimeout:                   readHeaderTimeout,
		IdleTimeout:                   90 * time.Second,
		MaxRequestBodySize:            64 << 20,
		CloseOnShutdown:               true,
	}
	return serveUntil(ctx, ln, srv.Serve, srv.ShutdownWithContext, nil)
}

// serve answers /metrics and /health itself and forwards the rest.
func (g *Gateway) serve(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/metrics":
		g.scrape(ctx)
		return
	case "/health":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("OK")
		return
	}
	began := g.clock.now()
	m := g.metrics
	m.inFlight.Inc()
	if g.delay > 0 {
		w := g.clock.waiter()
		w.until(context.Background(), began.Add(g.delay))
		w.close()
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	g.outgoing(ctx, req)
	err := g.upstream.Do(req, resp)
	fasthttp.ReleaseRequest(req)
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		m.upstreamErrors.Inc()
		ctx.Error("perflab gateway: cannot reach the upstream: "+err.Error(), fasthttp.StatusBadGateway)
		g.done(fasthttp.StatusBadGateway, began)
		return
	}
	code := resp.StatusCode()
	resp.Header.CopyTo(&ctx.Response.Header)
	for _, h := range hopHeaders {
		ctx.Response.Header.Del(h)
	}
	ctx.Response.Header.ResetConnectionClose()
	body := resp.BodyStream()
	if resp.Header.ContentLength() >= 0 || body == nil {
		// The whole answer is in hand (fasthttp read its known length).
		if body != nil {
			_, err = io.Copy(ctx.Response.BodyWriter(), body)
		} else {
			ctx.Response.SetBody(resp.Body())
		}
		g.release(resp)
		if err != nil {
			m.upstreamErrors.Inc()
		}
		g.done(code, began)
		return
	}
	// A stream (chunked or until close): pass each read on as it comes.
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		g.relay(w, body)
		g.release(resp)
		g.done(code, began)
	})
}

// relay passes an upstream stream on to the client a read at a time,
// flushing each, until the upstream ends, fails or the client goes.
func (g *Gateway) relay(w *bufio.Writer, body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil || w.Flush() != nil {
				g.metrics.canceled.Inc()
				return
			}
		}
		if rerr == io.EOF {
			return
		}
		if rerr != nil {
			g.metrics.upstreamErrors.Inc()
			return
		}
	}
}

// outgoing makes req the upstream copy of the client's request: the same
// method, headers and body, the upstream's host and path prefix.
func (g *Gateway) outgoing(ctx *fasthttp.RequestCtx, req *fasthttp.Request) {
	ctx.Request.CopyTo(req)
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	req.Header.ResetConnectionClose()
	uri := req.URI()
	uri.SetScheme("http")
	uri.SetHost(g.upstream.Addr)
	if len(g.base) > 0 {
		uri.SetPathBytes(append(g.base[:len(g.base):len(g.base)], ctx.Request.URI().PathOriginal()...))
	}
	req.SetHost(g.upstream.Addr)
}

// release returns the upstream connection behind resp to the pool.
func (g *Gateway) release(resp *fasthttp.Response) {
	_ = resp.CloseBodyStream()
	fasthttp.ReleaseResponse(resp)
}

// done counts a forwarded request once its answer is complete.
func (g *Gateway) done(code int, began time.Time) {
	m := g.metrics
	m.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	m.duration.Observe(g.clock.now().Sub(began).Seconds())
	m.inFlight.Dec()
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
