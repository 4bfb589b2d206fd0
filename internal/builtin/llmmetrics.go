package builtin

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// llmMetrics is what the mock provider tells a scraper about itself, in its
// own registry (see targetMetrics).
type llmMetrics struct {
	requests   *prometheus.CounterVec
	canceled   prometheus.Counter
	duration   prometheus.Histogram
	ttft       prometheus.Histogram
	bytes      prometheus.Counter
	prompt     prometheus.Counter
	completion prometheus.Counter
	inFlight   prometheus.Gauge
	handler    http.Handler
}

func newLLMMetrics() *llmMetrics {
	m := &llmMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perflab_llm_requests_total",
			Help: "Requests answered by the mock provider, by HTTP status code.",
		}, []string{"code"}),
		canceled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_llm_canceled_requests_total",
			Help: "Requests whose client went away before the answer was complete.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "perflab_llm_request_duration_seconds",
			Help:    "Time the mock provider spent on an admitted request, to the end of its answer.",
			Buckets: durationBuckets,
		}),
		ttft: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "perflab_llm_time_to_first_token_seconds",
			Help:    "Time from an admitted streamed request to its first token being written.",
			Buckets: durationBuckets,
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_llm_response_bytes_total",
			Help: "Response body bytes written by the mock provider.",
		}),
		prompt: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_llm_prompt_tokens_total",
			Help: "Prompt tokens (words) of the requests answered in full.",
		}),
		completion: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "perflab_llm_completion_tokens_total",
			Help: "Completion tokens of the answers sent in full.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "perflab_llm_in_flight_requests",
			Help: "Requests the mock provider is currently holding.",
		}),
	}
	for _, code := range []string{"200", "429", "500"} { // read 0 rather than absent
		m.requests.WithLabelValues(code)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.canceled, m.duration, m.ttft, m.bytes, m.prompt, m.completion, m.inFlight,
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// answered counts one answer with its status and body bytes.
func (m *llmMetrics) answered(status, bytes int) {
	m.requests.WithLabelValues(strconv.Itoa(status)).Inc()
	m.bytes.Add(float64(bytes))
}
