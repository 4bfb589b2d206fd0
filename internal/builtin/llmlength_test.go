package builtin

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// The mock writes --tokens unless a request says otherwise: min_tokens
// lengthens the answer, ignore_eos makes it max_tokens, max_tokens cuts
// it (finish "length"), and the usage reports what was written.
func TestLLMAnswerLengthFollowsTheRequest(t *testing.T) {
	l := NewLLM(LLMConfig{Tokens: 5}, nil)
	for _, tc := range []struct {
		extra  string
		tokens int
		finish string
	}{
		{``, 5, "stop"},
		{`,"max_tokens":3`, 3, "length"},
		{`,"max_tokens":9`, 5, "stop"},
		{`,"min_tokens":8`, 8, "stop"},
		{`,"min_tokens":8,"max_tokens":8`, 8, "stop"},
		{`,"min_tokens":7,"max_tokens":9`, 7, "stop"},
		{`,"max_tokens":12,"ignore_eos":true`, 12, "length"},
		{`,"max_completion_tokens":4,"ignore_eos":true`, 4, "length"},
		{`,"ignore_eos":true`, 5, "stop"},
	} {
		rec := post(t, l, "/v1/chat/completions", `{"messages":[{"role":"user","content":"a b"}]`+tc.extra+`}`)
		var got struct {
			Choices []struct {
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		decodeInto(t, rec, &got)
		u := usageOf(t, rec.Body.Bytes())
		if rec.Code != http.StatusOK || u[1] != tc.tokens || len(got.Choices) != 1 ||
			len(strings.Fields(got.Choices[0].Message.Content)) != tc.tokens || got.Choices[0].FinishReason != tc.finish {
			t.Errorf("%s: %d %s, want %d tokens, finish %s", tc.extra, rec.Code, rec.Body, tc.tokens, tc.finish)
		}
	}
	for _, extra := range []string{`,"min_tokens":4,"max_tokens":3`, `,"min_tokens":-1`} {
		if rec := post(t, l, "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}]`+extra+`}`); rec.Code != http.StatusBadRequest ||
			!strings.Contains(rec.Body.String(), "min_tokens") {
			t.Errorf("%s: %d %s, want 400 about min_tokens", extra, rec.Code, rec.Body)
		}
	}
}

// With MaxConcurrency 2, four requests sent at once are answered two at
// a time: the first two after the latency, the others a latency later.
// An answer before its time is a fault of the mock on any machine; one
// late by more than a quarter of the latency is judged against what the
// machine gave (testutil.Measure): beside 16 CPU hogs the first two came
// after 95 ms.
func TestLLMMaxConcurrencyQueuesTheRest(t *testing.T) {
	testutil.Alone(t)
	const latency = 60 * time.Millisecond
	srv := httptest.NewServer(NewLLM(LLMConfig{Latency: latency, Tokens: 1, MaxConcurrency: 2}, nil))
	t.Cleanup(srv.Close)
	var wg sync.WaitGroup
	took := make([]time.Duration, 4)
	machine := testutil.Measure(t)
	start := time.Now()
	for i := range took {
		wg.Go(func() {
			resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatHello))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	slices.Sort(took)
	if took[0] < latency || took[2] < 2*latency {
		t.Errorf("answered after %v: want two after %v and two after %v", took, latency, 2*latency)
	}
	if errs := (LLMConfig{MaxConcurrency: -1}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "max concurrency") {
		t.Errorf("MaxConcurrency -1: %v", errs)
	}
	machine.Check(t, took[1] < 2*latency-latency/4 && took[3] < 3*latency, testutil.Need{},
		"answered after %v: want two within %v of %v and two within %v of %v", took, latency-latency/4, latency, latency, 2*latency)
}
