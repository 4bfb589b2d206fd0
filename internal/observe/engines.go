package observe

import (
	"maps"
	"slices"
)

// BucketPrefix prefixes one bucket of a histogram the plan lists by its
// _bucket name: "bucket:<name>\x00<le>", its raw cumulative count summed
// over the series with that bound.
const BucketPrefix = "bucket:"

// ServingEngine names the metrics an LLM inference server exports about
// its own scheduler, by what they mean; "" where the server has none.
// A metrics_preset adds them to what a component's /metrics scrape
// records, and the analysis reads them back by these names.
type ServingEngine struct {
	Running string // gauge: requests in the running batch
	Waiting string // gauge: requests queued for it
	KVUsage string // gauge: fraction of the KV cache in use, 0..1
	// PrefixQueries and PrefixHits are counters of prompt tokens looked
	// up in and found in the prefix cache; HitRate is a gauge of the
	// same ratio where the server exports only that.
	PrefixQueries, PrefixHits, HitRate string
	TTFT                               string // histogram (its _bucket name): arrival to first token
	E2E                                string // histogram (its _bucket name): arrival to the end of the answer
}

// ServingEngines are the metrics presets, by name: vLLM's names (0.10
// and later), SGLang's and Hugging Face TGI's where they differ.
var ServingEngines = map[string]ServingEngine{
	"vllm": {
		Running: "vllm:num_requests_running", Waiting: "vllm:num_requests_waiting", KVUsage: "vllm:kv_cache_usage_perc",
		PrefixQueries: "vllm:prefix_cache_queries_total", PrefixHits: "vllm:prefix_cache_hits_total",
		TTFT: "vllm:time_to_first_token_seconds_bucket", E2E: "vllm:e2e_request_latency_seconds_bucket",
	},
	"sglang": {
		Running: "sglang:num_running_reqs", Waiting: "sglang:num_queue_reqs", KVUsage: "sglang:token_usage",
		HitRate: "sglang:cache_hit_rate",
		TTFT:    "sglang:time_to_first_token_seconds_bucket", E2E: "sglang:e2e_request_latency_seconds_bucket",
	},
	"tgi": {
		Running: "tgi_batch_current_size", Waiting: "tgi_queue_size",
		E2E: "tgi_request_duration_bucket",
	},
}

// ServingEngineNames are the presets' names, sorted.
func ServingEngineNames() []string { return slices.Sorted(maps.Keys(ServingEngines)) }

// Names are the metric names the preset records, in a fixed order.
func (e ServingEngine) Names() []string {
	var out []string
	for _, n := range []string{e.Running, e.Waiting, e.KVUsage, e.PrefixQueries, e.PrefixHits, e.HitRate, e.TTFT, e.E2E} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}
