// Package export sends perflab's measurements, while a run makes them, to
// a time-series database, so that a load test can be watched on the same
// Grafana as the system under test: Prometheus remote write 1.0
// (protobuf, snappy) or OTLP metrics (HTTP/protobuf or gRPC).
//
// A run hands a Set each workload's interval as it closes and each
// component's samples as they are taken; the Set turns them into series
// once and queues them for every target. Each target's queue is bounded
// and never blocks the load: when it is full the oldest batch is dropped
// and counted. A sender per target pushes what is queued every interval
// (1 s by default) and counts the pushes that failed; Close sends what is
// left and reports, per target, what was sent and what failed.
//
// The series (all labelled run, the run directory's name, and cell, the
// cell's name, in a plan's run: default without a matrix):
//
//	perflab_requests_total{profile,workload,operation}        counter: operations completed, failed ones too
//	perflab_errors_total{profile,workload,operation,class}    counter: failed operations by error class
//	perflab_latency_seconds{profile,workload,operation,quantile="0.5|0.9|0.99|1"}
//	                                                           the interval's quantiles of successful operations
//	perflab_latency_seconds_sum, perflab_latency_seconds_count counters: of successful operations
//	perflab_bytes_sent_total, perflab_bytes_received_total     counters, by operation (received: the whole answers, for http)
//	perflab_body_bytes_received_total, perflab_retries_total,
//	perflab_idle_closes_total, perflab_stray_answers_total     counters of the http driver, by operation, from their first
//	                                                           non-zero value: answers' body bytes, requests sent again on a
//	                                                           new connection, kept-alive connections found closed by the
//	                                                           server, connections closed for bytes no request asked for
//	perflab_dropped_total{profile,workload}                    counter: arrivals that found no free VU
//	perflab_unissued_total{profile,workload}                   counter: arrivals the generator did not issue (at the workload's end)
//	perflab_vus{profile,workload}                              gauge: VUs alive at the interval's end
//	perflab_scheduler_lag_p99_seconds{profile,workload}        gauge: the interval's p99 of dispatch − intended start
//	perflab_ttft_seconds, perflab_ttst_seconds,               summaries like latency, by operation, of what the openai driver
//	perflab_itl_seconds, perflab_tpot_seconds                  measures: time to first and second token, inter-token latency,
//	                                                           time per output token (streams only)
//	perflab_prompt_tokens_total, perflab_output_tokens_total   counters of the openai driver's tokens, by operation
//	perflab_output_tokens_per_second                           gauge: the interval's output tokens / its length
//	perflab_goodput_total, perflab_goodput_judged_total        counters: requests that met the goodput bounds, requests judged
//	perflab_goodput_ratio                                      gauge: the interval's good / judged
//	                                                           (each of these from its first value, so other drivers send none;
//	                                                           an LLM's failures are perflab_errors_total's classes:
//	                                                           rate_limited for 429, status_5xx, protocol for a broken stream, …)
//	perflab_component_<metric>{component}                      gauge: each sampled figure of each component
//	                                                           (cpu_cores, rss_bytes, cgroup_memory_bytes, go_heap_inuse_bytes,
//	                                                           gc_per_min, …); the generator is component="perflab"
//	perflab_component_metric{component,name}                   a metric the plan lists by name (metric_names)
//
// Latency is a summary: the quantiles are those the report shows for the
// interval (HDR histograms, 0.1 % precision), and every receiver takes
// them. A target may also ask for it as a Prometheus native histogram,
// perflab_latency_histogram_seconds (cumulative, schema 5), over remote
// write only: VictoriaMetrics 1.79 drops native histograms and Prometheus
// 2.x refuses a push that has one unless started with
// --enable-feature=native-histograms. Each
// sample carries the time of what it measures: an interval's end, a
// component's sample time. A counter's first sample is a zero at the start
// of its first interval (of its operation's first interval, for a series
// first seen later: an error class, an LLM's tokens), so that increase()
// and rate() over a run are exact.
package export
