package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// post sends body to h directly (no network) and returns the recorder.
func post(t *testing.T, h http.Handler, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func decodeInto(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("cannot decode %q: %v", rec.Body.String(), err)
	}
}

const chatHello = `{"model":"m1","messages":[{"role":"user","content":"hello there world"}]}`

func TestLLMChatAnswerWithUsage(t *testing.T) {
	l := NewLLM(LLMConfig{Tokens: 5}, nil)
	var got struct {
		Object  string
		Model   string
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	rec := post(t, l, "/v1/chat/completions", chatHello)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	decodeInto(t, rec, &got)
	u := usageOf(t, rec.Body.Bytes())
	if u != [3]int{3, 5, 8} {
		t.Errorf("usage (prompt, completion, total) = %v, want [3 5 8]", u)
	}
	if got.Object != "chat.completion" || got.Model != "m1" || len(got.Choices) != 1 {
		t.Fatalf("answer = %s", rec.Body)
	}
	c := got.Choices[0]
	if c.Message.Role != "assistant" || c.Message.Content != "lorem ipsum dolor sit amet" || c.FinishReason != "stop" {
		t.Errorf("choice = %+v", c)
	}

	rec = post(t, l, "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}],"max_tokens":2}`)
	decodeInto(t, rec, &got)
	if u := usageOf(t, rec.Body.Bytes()); u != [3]int{2, 2, 4} {
		t.Errorf("with max_tokens 2: usage = %v, want [2 2 4]", u)
	}
	if got.Model != DefaultLLMModel || got.Choices[0].FinishReason != "length" || got.Choices[0].Message.Content != "lorem ipsum" {
		t.Errorf("with max_tokens 2: %s", rec.Body)
	}
}

// usageOf returns prompt, completion and total tokens of an answer.
func usageOf(t *testing.T, body []byte) [3]int {
	t.Helper()
	var v struct {
		Usage struct {
			P int `json:"prompt_tokens"`
			C int `json:"completion_tokens"`
			T int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("cannot decode %q: %v", body, err)
	}
	return [3]int{v.Usage.P, v.Usage.C, v.Usage.T}
}

func TestLLMCompletionsEmbeddingsModels(t *testing.T) {
	l := NewLLM(LLMConfig{Tokens: 3, Model: "mock-7b"}, nil)
	rec := post(t, l, "/v1/completions", `{"prompt":"one two"}`)
	var comp struct {
		Object  string
		Choices []struct{ Text string }
	}
	decodeInto(t, rec, &comp)
	if comp.Object != "text_completion" || len(comp.Choices) != 1 || comp.Choices[0].Text != "lorem ipsum dolor" {
		t.Errorf("completions answer = %s", rec.Body)
	}
	if u := usageOf(t, rec.Body.Bytes()); u != [3]int{2, 3, 5} {
		t.Errorf("completions usage = %v", u)
	}

	rec = post(t, l, "/v1/embeddings", `{"input":["one two","three"]}`)
	var emb struct {
		Data []struct{ Embedding []float64 }
	}
	decodeInto(t, rec, &emb)
	if len(emb.Data) != 1 || len(emb.Data[0].Embedding) != embeddingDims {
		t.Errorf("embeddings answer = %s", rec.Body)
	}
	if u := usageOf(t, rec.Body.Bytes()); u != [3]int{3, 0, 3} {
		t.Errorf("embeddings usage = %v", u)
	}

	rec = httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	var models struct{ Data []struct{ ID, Object string } }
	decodeInto(t, rec, &models)
	if len(models.Data) != 1 || models.Data[0].ID != "mock-7b" || models.Data[0].Object != "model" {
		t.Errorf("/v1/models = %s", rec.Body)
	}
}

func TestLLMRefusesBadRequests(t *testing.T) {
	l := NewLLM(LLMConfig{Tokens: 1}, nil)
	for _, tt := range []struct {
		method, path, body string
		code               int
	}{
		{http.MethodPost, "/v1/chat/completions", `{"messages":`, http.StatusBadRequest},
		{http.MethodPost, "/v1/chat/completions", `{"model":"x"}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/completions", `{"messages":[{"content":"x"}]}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/embeddings", `{}`, http.StatusBadRequest},
		{http.MethodGet, "/v1/chat/completions", "", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/models", "", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v2/chat", chatHello, http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		var e struct {
			Error struct{ Message, Type string }
		}
		if rec.Code != tt.code || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Message == "" {
			t.Errorf("%s %s %s: %d %s, want %d with an OpenAI error", tt.method, tt.path, tt.body, rec.Code, rec.Body, tt.code)
		}
	}
}

// The rate limit admits N requests per window and refuses the rest at once
// with 429, Retry-After and an OpenAI rate-limit error.
func TestLLMRateLimit(t *testing.T) {
	clk := newFakeClock()
	l := NewLLM(LLMConfig{Tokens: 1, RateLimit: 3, RateWindow: time.Second}, clk.Now)
	var codes []int
	for range 5 {
		codes = append(codes, post(t, l, "/v1/chat/completions", chatHello).Code)
	}
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("codes in the first window = %v, want %v", codes, want)
	}
	clk.Set(600 * time.Millisecond)
	rec := post(t, l, "/v1/chat/completions", chatHello)
	var e struct{ Error struct{ Code string } }
	decodeInto(t, rec, &e)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || e.Error.Code != "rate_limit_exceeded" {
		t.Errorf("refusal = %d, Retry-After %q, %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	clk.Set(1100 * time.Millisecond)
	if code := post(t, l, "/v1/chat/completions", chatHello).Code; code != http.StatusOK {
		t.Errorf("first request of the next window: %d, want 200", code)
	}
	assertLines(t, scrape(t, l), `perflab_llm_requests_total{code="200"} 4`, `perflab_llm_requests_total{code="429"} 3`)
}

// The failure fraction is drawn per admitted request: all with 1, about
// the fraction otherwise, as 500s with an OpenAI server error.
func TestLLMErrorRate(t *testing.T) {
	rec := post(t, NewLLM(LLMConfig{ErrorRate: 1}, nil), "/v1/chat/completions", chatHello)
	var e struct{ Error struct{ Type string } }
	decodeInto(t, rec, &e)
	if rec.Code != http.StatusInternalServerError || e.Error.Type != "server_error" {
		t.Errorf("error rate 1: %d %s", rec.Code, rec.Body)
	}
	const n, rate = 1000, 0.3
	l := NewLLM(LLMConfig{ErrorRate: rate, Seed: 7, Tokens: 1}, nil)
	failed := 0
	for range n {
		if post(t, l, "/v1/chat/completions", chatHello).Code == http.StatusInternalServerError {
			failed++
		}
	}
	if failed < 255 || failed > 345 { // ±3.1σ of Binomial(1000, 0.3)
		t.Errorf("%d of %d failed, want about %v", failed, n, rate*n)
	}
	assertLines(t, scrape(t, l), fmt.Sprintf(`perflab_llm_requests_total{code="500"} %d`, failed),
		fmt.Sprintf("perflab_llm_completion_tokens_total %d", n-failed))
}

// sseEvent is one data line of a stream and when it was written, on the
// provider's fake clock (timedRecorder).
type sseEvent struct {
	at   time.Duration
	data string
}

// streamFrom posts a streaming request to url and returns every data line.
func streamFrom(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream answer %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var events []string
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, strings.TrimSuffix(data, "\n"))
		} else if line != "\n" && line != "" {
			t.Errorf("unexpected stream line %q", line)
		}
		if err == io.EOF {
			return events
		}
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
	}
}

func TestLLMStreamShape(t *testing.T) {
	srv := httptest.NewServer(NewLLM(LLMConfig{Tokens: 4}, nil))
	t.Cleanup(srv.Close)
	events := streamFrom(t, srv.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if len(events) != 4+3 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("events = %v, want 4 tokens, finish, usage, [DONE]", events)
	}
	var text strings.Builder
	for i, ev := range events[:4] {
		var c struct {
			Object  string
			Choices []struct {
				Delta        struct{ Role, Content string }
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("chunk %d %q: %v", i, ev, err)
		}
		d := c.Choices[0].Delta
		if c.Object != "chat.completion.chunk" || (i == 0) != (d.Role == "assistant") || c.Choices[0].FinishReason != nil {
			t.Errorf("chunk %d = %s", i, ev)
		}
		text.WriteString(d.Content)
	}
	if text.String() != "lorem ipsum dolor sit" {
		t.Errorf("streamed text %q", text.String())
	}
	if !strings.Contains(events[4], `"finish_reason":"stop"`) {
		t.Errorf("finish chunk = %s", events[4])
	}
	if u := usageOf(t, []byte(events[5])); u != [3]int{1, 4, 5} {
		t.Errorf("usage chunk %s: %v", events[5], u)
	}
	// completions stream text chunks, and no usage unless asked
	events = streamFrom(t, srv.URL+"/v1/completions", `{"prompt":"hi","stream":true}`)
	if len(events) != 4+2 || !strings.Contains(events[0], `"text":"lorem"`) {
		t.Errorf("completions stream = %v", events)
	}
}

// Streamed tokens are due when they should be: the headers at once, the
// first token after the latency, the others at the token rate, the finish
// and [DONE] with the last. The provider runs on a fake clock, so the test
// checks when each part is due, not how closely the machine keeps time
// (package clock's business); its own metrics read the same clock.
func TestLLMStreamTiming(t *testing.T) {
	const latency, rate, tokens = 40 * time.Millisecond, 200.0, 21
	const interval = 5 * time.Millisecond // 1/rate
	l := NewLLM(LLMConfig{Latency: latency, Tokens: tokens, TokensPerSecond: rate}, nil)
	fake := newFakeAnswers(true)
	l.clock = fake
	rec := newTimedRecorder(fake)
	l.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"messages":[{"content":"x"}],"stream":true}`)))
	if rec.code != http.StatusOK || rec.headerAt != 0 {
		t.Errorf("headers %d at %v, want 200 at once", rec.code, rec.headerAt)
	}
	if len(rec.events) != tokens+2 || rec.events[tokens+1].data != "[DONE]" {
		t.Fatalf("%d events, want %d tokens, finish, [DONE]", len(rec.events), tokens)
	}
	last := latency + (tokens-1)*interval
	for i, ev := range rec.events {
		want := min(latency+time.Duration(i)*interval, last)
		if ev.at != want {
			t.Errorf("event %d at %v, want %v", i, ev.at, want)
		}
	}
	assertLines(t, scrape(t, l), "perflab_llm_time_to_first_token_seconds_sum 0.04",
		"perflab_llm_request_duration_seconds_sum 0.14")
}

// A whole (not streamed) answer is due when its last token would have
// been streamed; jitter spreads the times to first token around the
// latency (sampleLatency's distributions are tested on their own).
func TestLLMAnswerTimingAndJitter(t *testing.T) {
	l := NewLLM(LLMConfig{Latency: 20 * time.Millisecond, Tokens: 11, TokensPerSecond: 500}, nil)
	fake := newFakeAnswers(true)
	l.clock = fake
	if rec := post(t, l, "/v1/chat/completions", chatHello); rec.Code != http.StatusOK {
		t.Fatalf("answer %d: %s", rec.Code, rec.Body)
	}
	if got := fake.deadlines(); !slices.Equal(got, []time.Duration{40 * time.Millisecond}) {
		t.Errorf("waited until %v, want 40ms (20ms + 10 tokens at 500/s)", got)
	}
	assertLines(t, scrape(t, l), "perflab_llm_request_duration_seconds_sum 0.04")

	const latency, jitter = 30 * time.Millisecond, 10 * time.Millisecond
	jl := NewLLM(LLMConfig{Latency: latency, Jitter: jitter, Dist: DistUniform, Tokens: 1, Seed: 3}, nil)
	jfake := newFakeAnswers(false) // every request starts at 0: a deadline is its time to first token
	jl.clock = jfake
	for range 8 {
		post(t, jl, "/v1/chat/completions", `{"messages":[{"content":"x"}],"stream":true}`)
	}
	ttfts := jfake.deadlines()
	slices.Sort(ttfts)
	if len(ttfts) != 8 || ttfts[0] < latency-jitter || ttfts[7] > latency+jitter {
		t.Errorf("times to first token %v, want 8 within %v ± %v", ttfts, latency, jitter)
	}
	if spread := ttfts[len(ttfts)-1] - ttfts[0]; spread < jitter/2 {
		t.Errorf("times to first token %v spread %v, want jitter to show", ttfts, spread)
	}
}

// A client that goes away mid-stream ends the stream; it is counted.
func TestLLMStreamCanceled(t *testing.T) {
	l := NewLLM(LLMConfig{Tokens: 100, TokensPerSecond: 50}, nil)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		l.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"content":"x"}],"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q", line)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream went on after the client left")
	}
	assertLines(t, scrape(t, l), "perflab_llm_canceled_requests_total 1", "perflab_llm_in_flight_requests 0")
}
