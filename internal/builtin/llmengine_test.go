package builtin

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The prefix cache finds the leading blocks it holds, not any block, and
// evicts the least recently used first.
func TestPrefixCache(t *testing.T) {
	c := newPrefixCache(3)
	if got := c.use([]uint64{1, 2}); got != 0 {
		t.Errorf("first use: %d hits, want 0", got)
	}
	if got := c.use([]uint64{1, 2, 3}); got != 2 {
		t.Errorf("1 2 3 after 1 2: %d hits, want 2", got)
	}
	if got := c.use([]uint64{9, 2}); got != 0 {
		t.Errorf("9 2: %d hits, want 0 (2 is cached, but not after 9)", got)
	}
	// 9 made four: 1 was least recently used, and went.
	if got := c.use([]uint64{1}); got != 0 {
		t.Errorf("1 after eviction: %d hits, want 0", got)
	}
	if got := c.use([]uint64{9, 2}); got != 2 {
		t.Errorf("9 2 again: %d hits, want 2", got)
	}
}

// Equal prefixes give equal block hashes up to where they part; a
// partial last block has none.
func TestPromptBlockHashes(t *testing.T) {
	hashes := func(s string) []uint64 {
		p := newPromptTokens(2)
		for _, w := range strings.Fields(s) {
			p.word(w)
		}
		if p.n != len(strings.Fields(s)) {
			t.Errorf("%q: %d tokens", s, p.n)
		}
		return p.hashes
	}
	a, b := hashes("a b c d e"), hashes("a b c x")
	if len(a) != 2 || len(b) != 2 || a[0] != b[0] || a[1] == b[1] {
		t.Errorf("hashes of a b c d e %v and a b c x %v: want 2 each, the first equal only", a, b)
	}
	if c := hashes("b a c d"); c[0] == a[0] || c[1] == a[1] {
		t.Errorf("b a c d shares a block hash with a b c d: %v, %v", c, a)
	}
}

// With a KV cache and a prefill time, a prompt's cached prefix is not
// prefilled again: the time to first token is the latency plus the
// prefill of the uncached tokens only, and /metrics counts the queried
// and found tokens in vLLM's names.
func TestLLMPrefixHitAnswersSooner(t *testing.T) {
	l := NewLLM(LLMConfig{Latency: 10 * time.Millisecond, PrefillPerToken: time.Millisecond, KVBlocks: 100, BlockSize: 4, Tokens: 1}, nil)
	fake := newFakeAnswers(false) // every request at 0: a deadline is its time to first token
	l.clock = fake
	for _, prompt := range []string{
		"a b c d e f g h i", // 9 tokens, none cached: 10 + 9 ms
		"a b c d e f g h i", // two blocks cached, 1 token left: 10 + 1 ms
		"a b c d x y z w",   // the first block cached: 10 + 4 ms
		"x b c d e f g h i", // none: 10 + 9 ms
	} {
		if rec := post(t, l, "/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, prompt)); rec.Code != http.StatusOK {
			t.Fatalf("%d: %s", rec.Code, rec.Body)
		}
	}
	want := []time.Duration{19 * time.Millisecond, 11 * time.Millisecond, 14 * time.Millisecond, 19 * time.Millisecond}
	if got := fake.deadlines(); !slices.Equal(got, want) {
		t.Errorf("times to first token %v, want %v", got, want)
	}
	assertLines(t, scrape(t, l),
		`vllm:prefix_cache_queries_total{model_name="perflab-mock"} 35`,
		`vllm:prefix_cache_hits_total{model_name="perflab-mock"} 12`,
		`vllm:num_requests_running{model_name="perflab-mock"} 0`,
		`vllm:time_to_first_token_seconds_sum{model_name="perflab-mock"} 0.063`,
		`vllm:e2e_request_latency_seconds_count{model_name="perflab-mock"} 4`)
}

// Without a KV cache, every prompt token is prefilled.
func TestLLMPrefillWithoutCache(t *testing.T) {
	l := NewLLM(LLMConfig{Latency: 10 * time.Millisecond, PrefillPerToken: time.Millisecond, Tokens: 1}, nil)
	fake := newFakeAnswers(false)
	l.clock = fake
	for range 2 {
		post(t, l, "/v1/chat/completions", chatHello)
	}
	if got := fake.deadlines(); !slices.Equal(got, []time.Duration{13 * time.Millisecond, 13 * time.Millisecond}) {
		t.Errorf("times to first token %v, want 13ms each (3 words)", got)
	}
	// no cache, no cache figures: 0 % in use and 0 hits would be figures
	// nothing measured
	if m := scrape(t, l); strings.Contains(m, "vllm:kv_cache_usage_perc") || strings.Contains(m, "vllm:prefix_cache_") || !strings.Contains(m, "vllm:num_requests_running") {
		t.Errorf("/metrics without --kv-blocks:\n%s", m)
	}
}

// A request waits while its blocks do not fit beside those the running
// requests hold, and the ones behind it wait too (first come, first
// served); a request larger than the cache runs alone.
func TestServingEngineQueuesOnKVBlocks(t *testing.T) {
	m := newLLMMetrics("m", true)
	e := newServingEngine(LLMConfig{KVBlocks: 4}, m)
	admitted := func(tk *ticket) bool {
		select {
		case <-tk.admitted:
			return true
		default:
			return false
		}
	}
	first, _ := e.enqueue(3, nil)
	second, _ := e.enqueue(2, nil) // 3 + 2 > 4
	third, _ := e.enqueue(1, nil)  // would fit, but is behind the second
	if !admitted(first) || admitted(second) || admitted(third) {
		t.Fatal("want the first admitted, the second and third waiting")
	}
	assertLines(t, scrapeMetrics(t, m), `vllm:num_requests_running 1`, `vllm:num_requests_waiting 2`, `vllm:kv_cache_usage_perc 0.75`)
	e.done(3)
	if !admitted(second) || !admitted(third) {
		t.Fatal("want the second and third admitted once the first is done")
	}
	assertLines(t, scrapeMetrics(t, m), `vllm:num_requests_running 2`, `vllm:num_requests_waiting 0`, `vllm:kv_cache_usage_perc 0.75`)
	e.done(2)
	e.done(1)
	big, _ := e.enqueue(9, nil)
	if !admitted(big) {
		t.Error("a request larger than the cache waits with nothing running")
	}
}

// scrapeMetrics is the exposition of m, with the model_name label left
// out, so that lines read as in the other tests.
func scrapeMetrics(t *testing.T, m *llmMetrics) string {
	t.Helper()
	return strings.ReplaceAll(scrape(t, m.handler), `{model_name="m"}`, "")
}

func TestLLMConfigValidatesTheKVCache(t *testing.T) {
	errs := LLMConfig{KVBlocks: -1, BlockSize: -1, PrefillPerToken: -time.Millisecond}.Validate()
	if len(errs) != 3 {
		t.Errorf("want 3 problems, got %v", errs)
	}
}
