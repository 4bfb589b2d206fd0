package builtin

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// targetMetrics is what the HTTP target tells a scraper about itself. It
// lives in its own registry so that two targets in one process (as in tests)
// never collide and nothing leaks into the global default registry.
type targetMetrics struct {
	requests *prometheus.CounterVec
	ok       prometheus.Counter // requests{code="200"}
	failed   prometheus.Counter // requests{code="500"}
	rejected prometheus.Counter // requests{code="503"}: over the capacity
	canceled prometheus.Counter
	duration prometheus.Histogram
	bytes    prometheus.Counter
	inFlight prometheus.Gauge
	handler  http.Handler
}

// durationBuckets span 0.5 ms to about 33 s, doubling: fine enough to tell
// a 20 ms target from a 40 ms one, wide enough to hold multi-second stalls.
var durationBuckets = prometheus.ExponentialBuckets(0.0005, 2, 17)

// newTargetMetrics builds the registry. stalls reports how many stall
// windows have begun; it is read at scrape time. ballast is the size of the
// target's ballast in bytes, exported so that reports can subtract it from
// the heap.
func newTargetMetrics(stalls func() float64, ballast float64) *targetMetrics {
	m := &targetMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perflab_target_requests_total",
			Help: "Requests answered by the target, by HTTP status code.",
		}, []string{"code"}),
		canceled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_target_canceled_requests_total",
			Help: "Requests whose client went away before the target answered.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "perflab_target_request_duration_seconds",
			Help:    "Time the target spent on a request, stalls included.",
			Buckets: durationBuckets,
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_target_response_bytes_total",
			Help: "Response body bytes written by the target.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "perflab_target_in_flight_requests",
			Help: "Requests the target is currently holding.",
		}),
	}
	// Create both series up front so they read 0 rather than being absent.
	m.ok = m.requests.WithLabelValues("200")
	m.failed = m.requests.WithLabelValues("500")
	m.rejected = m.requests.WithLabelValues("503")
	stallsTotal := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "perflab_target_stalls_total",
		Help: "Stall windows begun since the target started.",
	}, stalls)
	ballastBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "perflab_target_ballast_bytes",
		Help: "Size of the never-touched heap ballast the target holds (--ballast).",
	}, func() float64 { return ballast })

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.canceled, m.duration, m.bytes, m.inFlight, stallsTotal, ballastBytes,
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}
