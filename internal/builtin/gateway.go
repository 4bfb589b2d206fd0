package builtin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
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
// delay (slept precisely, package clock) before it forwards each request
// to its upstream over keep-alive connections, streams the answer back as
// it comes (server-sent events included) and answers 502 when the
// upstream cannot be reached. It serves its own /metrics and /health;
// every other path is forwarded.
type Gateway struct {
	delay   time.Duration
	proxy   *httputil.ReverseProxy
	rt      *http.Transport
	metrics *gatewayMetrics
}

var _ http.Handler = (*Gateway)(nil)

// NewGateway returns the gateway for cfg, or cfg's problems.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid gateway: %w", errors.Join(errs...))
	}
	up, _ := upstreamURL(cfg.Upstream)
	g := &Gateway{delay: cfg.Delay, metrics: newGatewayMetrics()}
	g.rt = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4096, // one per client connection in flight, so none is closed after use
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(up) },
		Transport: g.rt,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				g.metrics.canceled.Inc()
				return
			}
			g.metrics.upstreamErrors.Inc()
			http.Error(w, "perflab gateway: cannot reach the upstream: "+err.Error(), http.StatusBadGateway)
		},
	}
	return g, nil
}

// Close closes the idle connections to the upstream.
func (g *Gateway) Close() { g.rt.CloseIdleConnections() }

// ServeHTTP answers /metrics and /health itself and forwards the rest.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		g.metrics.handler.ServeHTTP(w, r)
		return
	case "/health":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("OK"))
		return
	}
	began := time.Now()
	m := g.metrics
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	if !sleep(r.Context(), g.delay) {
		m.canceled.Inc()
		return
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	g.proxy.ServeHTTP(sw, r)
	m.requests.WithLabelValues(strconv.Itoa(sw.code)).Inc()
	m.duration.Observe(time.Since(began).Seconds())
}

// statusWriter remembers the status code of the answer; Unwrap lets
// http.ResponseController (which the proxy flushes streams through) reach
// the connection's own writer.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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
