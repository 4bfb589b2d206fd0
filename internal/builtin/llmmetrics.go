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

	// vLLM's names, so that what reads a vLLM server reads the mock.
	running       prometheus.Gauge
	waiting       prometheus.Gauge
	kvUsage       prometheus.Gauge
	prefixQueries prometheus.Counter
	prefixHits    prometheus.Counter
	serverTTFT    prometheus.Histogram
	e2e           prometheus.Histogram

	handler http.Handler
}

// newLLMMetrics are the mock's metrics for model; the KV cache's and the
// prefix cache's only with kv (--kv-blocks): without a cache they would
// read 0 % in use and 0 % hits, figures nothing measured.
func newLLMMetrics(model string, kv bool) *llmMetrics {
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
	m.addVLLM(model)
	for _, code := range []string{"200", "429", "500"} { // read 0 rather than absent
		m.requests.WithLabelValues(code)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.canceled, m.duration, m.ttft, m.bytes, m.prompt, m.completion, m.inFlight,
		m.running, m.waiting, m.serverTTFT, m.e2e,
	)
	if kv {
		reg.MustRegister(m.kvUsage, m.prefixQueries, m.prefixHits)
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// answered counts one answer with its status and body bytes.
func (m *llmMetrics) answered(status, bytes int) {
	m.requests.WithLabelValues(strconv.Itoa(status)).Inc()
	m.bytes.Add(float64(bytes))
}

// vllmBuckets are the bounds of vLLM's time to first token histogram.
var vllmBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
	2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// addVLLM makes the metrics vLLM's engine exports under the same names
// and model_name label (vLLM 0.10 and later), which the vllm scrape
// preset reads. Times are from the request's arrival, queueing included,
// as vLLM's are; prefix cache queries and hits count prompt tokens.
func (m *llmMetrics) addVLLM(model string) {
	labels := prometheus.Labels{"model_name": model}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
	}
	histogram := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: labels, Buckets: vllmBuckets})
	}
	m.running = gauge("vllm:num_requests_running", "Requests in the running batch.")
	m.waiting = gauge("vllm:num_requests_waiting", "Requests waiting for the running batch.")
	m.kvUsage = gauge("vllm:kv_cache_usage_perc", "Fraction of the KV cache blocks held by running requests (1 = full).")
	m.prefixQueries = counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.")
	m.prefixHits = counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.")
	m.serverTTFT = histogram("vllm:time_to_first_token_seconds", "Time from arrival to the first token.")
	m.e2e = histogram("vllm:e2e_request_latency_seconds", "Time from arrival to the end of the answer.")
}
