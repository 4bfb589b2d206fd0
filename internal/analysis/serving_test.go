package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/scrape"
)

// The quantiles of a histogram's buckets are histogram_quantile's.
func TestBucketQuantile(t *testing.T) {
	les := []float64{0.1, 0.2, 0.4, math.Inf(1)}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for _, tc := range []struct {
		q      float64
		counts []float64
		want   BucketQuantile
	}{
		{0.5, []float64{0, 100, 100, 100}, BucketQuantile{ms(150), ms(100), ms(200)}}, // rank 50 of the 100 in (0.1, 0.2]
		{0.5, []float64{50, 100, 100, 100}, BucketQuantile{ms(100), 0, ms(100)}},      // rank 50 is the first bucket's last
		{0.25, []float64{50, 100, 100, 100}, BucketQuantile{ms(50), 0, ms(100)}},      // within the first, from 0
		{0.99, []float64{0, 0, 90, 100}, BucketQuantile{ms(400), ms(400), 0}},         // in +Inf: the highest finite bound
	} {
		got := bucketQuantile(tc.q, les, tc.counts)
		near := func(a, b time.Duration) bool { return (a - b).Abs() <= time.Microsecond }
		if !near(got.Est, tc.want.Est) || got.Lo != tc.want.Lo || got.Hi != tc.want.Hi {
			t.Errorf("q %v of %v: %+v, want %+v", tc.q, tc.counts, got, tc.want)
		}
	}
}

// servingOf reads a vLLM server's figures: gauges as sampled, the hit
// rate and times over what grew in the window.
func TestServingOfVLLM(t *testing.T) {
	at := func(vs ...float64) []Point {
		var ps []Point
		for i, v := range vs {
			ps = append(ps, Point{T: time.Unix(int64(i), 0), V: v})
		}
		return ps
	}
	ttft := "vllm:time_to_first_token_seconds_bucket"
	series := map[string][]Point{
		observe.MetricPrefix + "vllm:num_requests_waiting":        at(0, 2, 4),
		observe.MetricPrefix + "vllm:kv_cache_usage_perc":         at(0.5, 0.25, 0.75),
		observe.CounterPrefix + "vllm:prefix_cache_queries_total": at(1000, 1500, 2000),
		observe.CounterPrefix + "vllm:prefix_cache_hits_total":    at(100, 350, 600),
		scrape.BucketMetric(ttft, 0.1):                            at(10, 10, 10),  // none in the window
		scrape.BucketMetric(ttft, 0.2):                            at(10, 60, 110), // 100
		scrape.BucketMetric(ttft, math.Inf(1)):                    at(10, 60, 110),
	}
	s := servingOf(series)
	if s == nil || s.Engine != "vllm" {
		t.Fatalf("serving %+v, want vllm's", s)
	}
	if s.Waiting.Max != 4 || s.KVUsage.Max != 0.75 || s.Running.N != 0 {
		t.Errorf("gauges %+v %+v %+v", s.Waiting, s.KVUsage, s.Running)
	}
	if !s.HasHitRate || s.HitRate != 0.5 || s.Queries != 1000 {
		t.Errorf("hit rate %v of %v queries, want 0.5 of 1000", s.HitRate, s.Queries)
	}
	if s.TTFT.Count != 100 || s.TTFT.P50.Est != 150*time.Millisecond || s.TTFT.P50.Lo != 100*time.Millisecond || !s.TTFT.HasP99 || s.E2E.Count != 0 {
		t.Errorf("TTFT %+v, E2E %+v: want 100 requests, p50 150ms; no e2e", s.TTFT, s.E2E)
	}
	if servingOf(map[string][]Point{observe.MetricPrefix + "other": at(1)}) != nil {
		t.Error("serving figures of a component without any")
	}
}

// The why of a latency rise names the server's own figures that moved
// from the phase before: its queue, its KV cache, its prefix hits, its
// TTFT; or says none did.
func TestServingMoved(t *testing.T) {
	res := func(s *Serving) *Resources {
		return &Resources{Components: []ComponentResources{{Component: Component{Name: "vllm"}, Serving: s}}}
	}
	gauge := func(v float64) Stat { return Stat{N: 5, Max: v, Avg: v} }
	ttft := func(d time.Duration) ServerTimes { return ServerTimes{Count: 50, P50: BucketQuantile{Est: d}} }
	calm := &Serving{Engine: "vllm", Waiting: gauge(0), KVUsage: gauge(0.3), HitRate: 0.6, HasHitRate: true, TTFT: ttft(40 * time.Millisecond)}
	busy := &Serving{Engine: "vllm", Waiting: gauge(12), KVUsage: gauge(0.97), HitRate: 0.2, HasHitRate: true, TTFT: ttft(400 * time.Millisecond)}
	got := servingMoved(res(calm), res(busy))
	for _, want := range []string{"server vllm: its queue grew (waiting 0 → 12)", "its KV cache filled (30 % → 97 % in use)",
		"its prefix-cache hit rate fell (60 % → 20 %)", "its own TTFT p50 rose (40ms → 400ms)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := servingMoved(res(calm), res(calm)); !strings.Contains(got, "did not move: the rise came from outside it") {
		t.Errorf("nothing moved: %q", got)
	}
	if got := servingMoved(res(calm), &Resources{}); got != "" {
		t.Errorf("no serving figures in the phase: %q", got)
	}
	// TGI exports its queue alone: only the queue is said not to have
	// moved, and a server with nothing of its own measured says nothing
	tgi := &Serving{Engine: "tgi", Waiting: gauge(0)}
	if got := servingMoved(res(tgi), res(tgi)); got != "server vllm's own queue did not move: the rise came from outside it" {
		t.Errorf("a queue alone: %q", got)
	}
	if got := servingMoved(res(&Serving{Engine: "tgi"}), res(&Serving{Engine: "tgi"})); got != "" {
		t.Errorf("nothing measured: %q", got)
	}
}

// SGLang exports its hit rate as a ratio: the report gives its mean,
// without a count of queried tokens.
func TestServingOfSGLang(t *testing.T) {
	series := map[string][]Point{
		observe.MetricPrefix + "sglang:num_queue_reqs": {{T: time.Unix(0, 0), V: 3}},
		observe.MetricPrefix + "sglang:cache_hit_rate": {{T: time.Unix(0, 0), V: 0.2}, {T: time.Unix(1, 0), V: 0.4}},
	}
	s := servingOf(series)
	if s == nil || s.Engine != "sglang" || !s.HasHitRate || math.Abs(s.HitRate-0.3) > 1e-9 || s.Queries != 0 || s.Waiting.Max != 3 {
		t.Errorf("serving %+v, want sglang's: hit rate 0.3 (the mean), queue 3", s)
	}
}

// A server's p99 from a histogram of fewer requests than a p99 needs
// (MinCountFor, 100) is not given: 99 requests grew, not 10 000.
func TestServerTimesP99NeedsItsCount(t *testing.T) {
	name := "vllm:e2e_request_latency_seconds_bucket"
	grew := func(n float64) map[string][]Point {
		return map[string][]Point{
			scrape.BucketMetric(name, 0.5):         {{T: time.Unix(0, 0), V: 0}, {T: time.Unix(1, 0), V: n}},
			scrape.BucketMetric(name, math.Inf(1)): {{T: time.Unix(0, 0), V: 0}, {T: time.Unix(1, 0), V: n}},
		}
	}
	if st := serverTimes(grew(99), name); st.Count != 99 || st.HasP99 {
		t.Errorf("99 requests: %+v, want no p99", st)
	}
	if st := serverTimes(grew(100), name); !st.HasP99 {
		t.Errorf("100 requests: %+v, want a p99", st)
	}
}
