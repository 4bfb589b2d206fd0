package openaidriver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// startMock serves perflab's mock provider on 127.0.0.1.
func startMock(t *testing.T, cfg builtin.LLMConfig) (*httptest.Server, *builtin.LLM) {
	t.Helper()
	if errs := cfg.Validate(); errs != nil {
		t.Fatalf("mock config: %v", errs)
	}
	l := builtin.NewLLM(cfg, nil)
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return srv, l
}

func newDriver(t *testing.T, c Config) *Driver {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func do(d *Driver) driver.Result {
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	return r
}

// mockMetric reads one sample of the mock's /metrics.
func mockMetric(t *testing.T, h http.Handler, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func within(got, want, frac float64) bool { return got >= want*(1-frac) && got <= want*(1+frac) }

// Against a mock told TTFT 50 ms, 100 tokens/s and 50 tokens, the
// measures the driver hands the recorder give all three within 5 %: the
// time to first token (median over three streams, so that one preempted
// read on a busy machine cannot fail it), the inter-token latency and the
// time per output token, whose inverse is the stream's tokens/s.
func TestStreamTimingMatchesTheMock(t *testing.T) {
	testutil.Alone(t)
	testutil.Timing(t)
	const ttft, rate, tokens, runs = 50 * time.Millisecond, 100.0, 50, 3
	srv, _ := startMock(t, builtin.LLMConfig{Latency: ttft, TokensPerSecond: rate, Tokens: tokens})
	d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, Prompts: []string{"count to fifty"}})
	rec := stats.NewRecorder(1, time.Now())
	for range runs {
		r := do(d)
		if r.Class != stats.OK {
			t.Fatalf("class %v: %s", r.Class, r.Message)
		}
		if r.TTFB <= 0 || r.TTFB > ttft+ttft/2 {
			t.Errorf("TTFB %v: want the first response byte, at most the first token", r.TTFB)
		}
		record(rec, &r)
	}
	st := rec.Flush(time.Now()).Ops["chat"]
	ttfts, itl, tpot := st.Measures[stats.TTFT], st.Measures[stats.ITL], st.Measures[stats.TPOT]
	if ttfts == nil || itl == nil || tpot == nil {
		t.Fatalf("measures %v: want TTFT, ITL and TPOT", st.Measures)
	}
	t.Logf("TTFT p50 %v max %v; ITL p50 %v p99 %v; TPOT p50 %v (%.2f tokens/s)", ttfts.Quantile(0.5), ttfts.Max(),
		itl.Quantile(0.5), itl.Quantile(0.99), tpot.Quantile(0.5), 1/tpot.Quantile(0.5).Seconds())
	if got := ttfts.Quantile(0.5); got < ttft-stats.Resolution(ttft) || !within(got.Seconds(), ttft.Seconds(), 0.05) {
		t.Errorf("time to first token p50 %v, want %v within 5 %%", got, ttft)
	}
	for name, h := range map[string]*stats.Hist{"inter-token latency": itl, "time per output token": tpot} {
		if p50 := h.Quantile(0.5); !within(p50.Seconds(), 1/rate, 0.05) {
			t.Errorf("%s p50 %v, want %v within 5 %%", name, p50, time.Duration(float64(time.Second)/rate))
		}
	}
	if got := 1 / tpot.Quantile(0.5).Seconds(); !within(got, rate, 0.05) {
		t.Errorf("%.1f tokens/s per stream, want %v within 5 %%", got, rate)
	}
	if ttfts.Count() != runs || itl.Count() != runs*(tokens-1) || tpot.Count() != runs {
		t.Errorf("counts: TTFT %d, ITL %d, TPOT %d; want one TTFT and TPOT per stream, one ITL per gap",
			ttfts.Count(), itl.Count(), tpot.Count())
	}
	if want := [stats.NumCounters]int64{stats.PromptTokens: runs * 3, stats.OutputTokens: runs * tokens}; st.Counters != want {
		t.Errorf("counters %v, want %v", st.Counters, want)
	}
	if s := d.Stats(); s.Requests != runs || s.WithUsage != runs || s.OutputTokens != runs*tokens || s.PromptTokens != runs*3 {
		t.Errorf("stats %+v", s)
	}
}

// record hands r to rec as the engine does.
func record(rec *stats.Recorder, r *driver.Result) {
	now := time.Now()
	rec.Record(0, &stats.Sample{Op: r.Op, Intended: now, Start: now, End: now, TTFB: r.TTFB, Class: r.Class,
		Message: r.Message, Measures: r.Measures, Counters: r.Counters})
}

// A Result reused from one stream to the next keeps its measures' storage:
// once it holds a whole stream's gaps, Do appends without growing it, and
// a failed stream leaves no measure.
func TestMeasuresReuseTheResult(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: 20, TokensPerSecond: 10000})
	d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, Prompts: []string{"x"}})
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	if r.Class != stats.OK || len(r.Measures) != 19+6 {
		t.Fatalf("%v %s: %d measures, want 19 gaps, TTFT, TTST, TPOT, the two lengths and NTPOT", r.Class, r.Message, len(r.Measures))
	}
	backing := &r.Measures[:1][0]
	d.Do(context.Background(), 0, &r)
	if len(r.Measures) != 25 || &r.Measures[:1][0] != backing {
		t.Errorf("second stream: %d measures, same storage %v", len(r.Measures), &r.Measures[:1][0] == backing)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted || len(r.Measures) != 0 || r.Counters != [stats.NumCounters]int64{} {
		t.Errorf("interrupted: %v, %d measures, counters %v", r.Class, len(r.Measures), r.Counters)
	}
}

// Whole answers: usage parsed, request and answer bytes counted exactly
// (the mock counts what it wrote), TTFB the first byte.
func TestWholeAnswerUsageAndSizes(t *testing.T) {
	const latency = 20 * time.Millisecond
	srv, mock := startMock(t, builtin.LLMConfig{Latency: latency, Tokens: 7})
	d := newDriver(t, Config{URL: srv.URL + "/v1", Model: "m", MaxTokens: 5, Prompts: []string{"one two three", "four"}})
	var sent, recv int64
	for i := range 4 {
		r := do(d)
		if r.Class != stats.OK || r.Op != "chat" {
			t.Fatalf("request %d: %v %s", i, r.Class, r.Message)
		}
		if want := int64(len(d.reqs.fixed[i%2])); r.BytesSent != want {
			t.Errorf("request %d: BytesSent %d, want the body's %d", i, r.BytesSent, want)
		}
		if r.TTFB < latency || r.TTFB > 10*latency {
			t.Errorf("request %d: TTFB %v, want the answer's first byte after %v", i, r.TTFB, latency)
		}
		lengths := []stats.Timing{stats.LengthTiming(stats.PromptLength, int64(3-2*(i%2))), stats.LengthTiming(stats.OutputLength, 5)}
		if len(r.Measures) != 3 || !slices.Equal(r.Measures[:2], lengths) || r.Counters[stats.OutputTokens] != 5 || r.Counters[stats.PromptTokens] != int64(3-2*(i%2)) {
			t.Errorf("request %d: measures %v, counters %v; want the usage's tokens, their lengths and NTPOT alone", i, r.Measures, r.Counters)
		}
		// NTPOT: the whole answer, after 20 ms, over its 5 tokens.
		if n := r.Measures[2]; n.Measure != stats.NTPOT || n.D < latency/5 || n.D > 10*latency/5 {
			t.Errorf("request %d: %v, want NTPOT about %v", i, n, latency/5)
		}
		sent, recv = sent+r.BytesSent, recv+r.BytesRecv
	}
	if got := mockMetric(t, mock, "perflab_llm_response_bytes_total"); float64(recv) != got {
		t.Errorf("BytesRecv sums to %d, the mock wrote %v", recv, got)
	}
	s := d.Stats()
	if s.WithUsage != 4 || s.PromptTokens != 2*(3+1) || s.OutputTokens != 4*5 {
		t.Errorf("stats %+v, want usage of 4 answers: 8 prompt tokens, 20 output (max_tokens 5)", s)
	}
}

// 429s from the rate limit and 500s from the failure fraction are counted
// apart, each with the API's message; other 4xx stay status_4xx.
func TestRefusalsAreClassedApart(t *testing.T) {
	limited, _ := startMock(t, builtin.LLMConfig{Tokens: 1, RateLimit: 2, RateWindow: time.Hour})
	d := newDriver(t, Config{URL: limited.URL, Model: "m", Stream: true, Prompts: []string{"x"}})
	var classes []stats.Class
	var last driver.Result
	for range 4 {
		last = do(d)
		classes = append(classes, last.Class)
	}
	if want := []stats.Class{stats.OK, stats.OK, stats.RateLimited, stats.RateLimited}; !slices.Equal(classes, want) {
		t.Errorf("classes %v, want %v", classes, want)
	}
	if !strings.HasPrefix(last.Message, "HTTP 429 Too Many Requests: rate limit reached") || last.TTFB != 0 || last.BytesRecv == 0 {
		t.Errorf("429: message %q, TTFB %v, %d bytes", last.Message, last.TTFB, last.BytesRecv)
	}

	failing, _ := startMock(t, builtin.LLMConfig{ErrorRate: 1})
	r := do(newDriver(t, Config{URL: failing.URL, Model: "m", Prompts: []string{"x"}}))
	if r.Class != stats.Status5xx || r.Message != "HTTP 500 Internal Server Error: perflab: injected error" {
		t.Errorf("500: %v %q", r.Class, r.Message)
	}
	r = do(newDriver(t, Config{URL: failing.URL + "/elsewhere", Model: "m", Prompts: []string{"x"}}))
	if r.Class != stats.Status4xx || r.Message != "HTTP 404 Not Found: no such endpoint: /elsewhere/v1/chat/completions" {
		t.Errorf("404: %v %q", r.Class, r.Message)
	}
}

func TestCompletionsAndEmbeddings(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: 4, TokensPerSecond: 1000})
	for _, c := range []Config{
		{Endpoint: EndpointCompletions, Stream: true},
		{Endpoint: EndpointCompletions},
		{Endpoint: EndpointEmbeddings},
	} {
		c.URL, c.Model, c.Prompts = srv.URL, "m", []string{"a b c"}
		d := newDriver(t, c)
		r := do(d)
		s := d.Stats()
		wantOut := int64(4)
		if c.Endpoint == EndpointEmbeddings {
			wantOut = 0
		}
		if r.Class != stats.OK || r.Op != c.Endpoint || s.PromptTokens != 3 || s.OutputTokens != wantOut || r.TTFB <= 0 {
			t.Errorf("%s stream=%v: %v %q op %q TTFB %v, stats %+v", c.Endpoint, c.Stream, r.Class, r.Message, r.Op, r.TTFB, s)
		}
	}
}

// The request carries the key, the extra headers and the body the config
// describes, to the endpoint's path.
func TestRequestShape(t *testing.T) {
	type seen struct {
		path, auth, vk, accept string
		body                   map[string]any
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{path: r.URL.Path, auth: r.Header.Get("Authorization"), vk: r.Header.Get("X-Bf-Vk"), accept: r.Header.Get("Accept")}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &s.body)
		got <- s
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	temp := 0.5
	d := newDriver(t, Config{URL: srv.URL + "/gw/", APIKey: "sk-1", Model: "openai/gpt-4o-mini", Stream: true,
		MaxTokens: 32, Temperature: &temp, Prompts: []string{"hello"}, Headers: map[string]string{"x-bf-vk": "vk-2"}})
	if r := do(d); r.Class != stats.OK || d.Stats().OutputTokens != 1 || d.Stats().WithUsage != 0 {
		t.Fatalf("%v %s; stats %+v (no usage: one token per content event)", r.Class, r.Message, d.Stats())
	}
	s := <-got
	body, _ := json.Marshal(s.body)
	want := `{"max_tokens":32,"messages":[{"content":"hello","role":"user"}],"model":"openai/gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"temperature":0.5}`
	if s.path != "/gw/v1/chat/completions" || s.auth != "Bearer sk-1" || s.vk != "vk-2" || s.accept != "text/event-stream" || string(body) != want {
		t.Errorf("request %+v\nbody %s\nwant %s", s, body, want)
	}
}

func TestTimeoutInterruptAndConnect(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Latency: 5 * time.Second, Tokens: 1})
	d := newDriver(t, Config{URL: srv.URL, Model: "m", Timeout: 100 * time.Millisecond, Prompts: []string{"x"}})
	r := do(d)
	if r.Class != stats.Timeout || r.Message != "request timed out after 100ms" || r.Connect <= 0 {
		t.Errorf("timeout: %v %q, connect %v", r.Class, r.Message, r.Connect)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d.Do(ctx, 1, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("cancelled: %v %q", r.Class, r.Message)
	}

	fast, _ := startMock(t, builtin.LLMConfig{Tokens: 1})
	d = newDriver(t, Config{URL: fast.URL, Model: "m", Prompts: []string{"x"}})
	if a, b := do(d), do(d); a.Connect <= 0 || b.Connect != 0 || b.Class != stats.OK {
		t.Errorf("connect of a new connection %v, of a reused one %v (%v)", a.Connect, b.Connect, b.Class)
	}
}

// Facts state the token figures and never a secret.
func TestFacts(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: 3, TokensPerSecond: 1000})
	d := newDriver(t, Config{URL: srv.URL, APIKey: "sk-SECRET", Model: "m", Stream: true,
		Prompts: []string{"x"}, Headers: map[string]string{"X-Key": "h-SECRET"}})
	do(d)
	facts := map[string]string{}
	for _, f := range d.Facts() {
		if strings.Contains(f.Value, "SECRET") {
			t.Errorf("fact %q shows a secret: %q", f.Name, f.Value)
		}
		facts[f.Name] = f.Value
	}
	for name, want := range map[string]string{"output tokens": "3", "prompt tokens": "1", "successful requests": "1",
		"answers with usage": "1", "prompts": "1"} {
		if facts[name] != want {
			t.Errorf("fact %q = %q, want %q", name, facts[name], want)
		}
	}
	if facts["api"] == "" || len(facts) != 6 {
		t.Errorf("facts %v: want the api and the token totals, no rate or latency (those are measured per interval)", facts)
	}
}

// Many VUs at once: every operation and token is counted once (run with
// -race to check the sharing).
func TestConcurrentVUs(t *testing.T) {
	const vus, each, tokens = 16, 10, 5
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: tokens})
	d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, Prompts: []string{"a", "b c"}})
	errs := make(chan string, vus*each)
	var wg sync.WaitGroup
	for vu := range vus {
		wg.Go(func() {
			var r driver.Result
			for range each {
				d.Do(context.Background(), vu, &r)
				if r.Class != stats.OK {
					errs <- r.Message
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	s := d.Stats()
	if s.Requests != vus*each || s.OutputTokens != vus*each*tokens || s.PromptTokens != vus*each*3/2 {
		t.Errorf("stats %+v", s)
	}
}
