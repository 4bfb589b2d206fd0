package openaidriver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// recordBodies serves h and keeps every request body it was sent.
func recordBodies(t *testing.T, h http.Handler) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bodies...) }
}

// sentMessages reads the messages of a chat request body.
func sentMessages(t *testing.T, body string) []message {
	t.Helper()
	var b struct{ Messages []message }
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return b.Messages
}

// A conversation's turn n sends the prefix, every earlier user message
// with the answer the server gave it, and a new user message; each turn
// is its own operation; the last turn, or a failed one, ends it and the
// VU starts another; each VU keeps its own.
func TestConversationTurns(t *testing.T) {
	for _, stream := range []bool{true, false} {
		l := builtin.NewLLM(builtin.LLMConfig{Tokens: 3}, nil)
		srv, bodies := recordBodies(t, l)
		d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: stream, Seed: 5,
			InputTokens: &Lengths{Mean: 5}, SharedPrefix: &SharedPrefix{Prefixes: 1, Tokens: 7},
			Conversation: &Conversation{Turns: 3}})
		var ops []string
		var prompts []int64
		for _, vu := range []int{0, 1, 0, 0, 0} {
			var r driver.Result
			d.Do(context.Background(), vu, &r)
			if r.Class != stats.OK {
				t.Fatalf("stream %v: %s: %s", stream, r.Class, r.Message)
			}
			ops = append(ops, r.Op)
			prompts = append(prompts, r.Counters[stats.PromptTokens])
		}
		if want := "chat turn 1,chat turn 1,chat turn 2,chat turn 3,chat turn 1"; strings.Join(ops, ",") != want {
			t.Errorf("stream %v: operations %v, want %s", stream, ops, want)
		}
		// 7 of prefix + 5 a user message + 3 an answer.
		if want := []int64{12, 12, 20, 28, 12}; !slices.Equal(prompts, want) {
			t.Errorf("stream %v: prompt tokens %v, want %v", stream, prompts, want)
		}
		sent := bodies()
		third := sentMessages(t, sent[3]) // vu 0's turn 3
		first := sentMessages(t, sent[0])
		roles := []string{}
		for _, m := range third {
			roles = append(roles, m.Role)
		}
		if strings.Join(roles, " ") != "system user assistant user assistant user" || third[0] != first[0] || third[1] != first[1] {
			t.Fatalf("stream %v: turn 3 sent %+v, turn 1 %+v: want turn 1's messages first", stream, third, first)
		}
		if third[2].Content != "lorem ipsum dolor" || third[4].Content != "lorem ipsum dolor" {
			t.Errorf("stream %v: the answers kept were %q and %q, want the mock's", stream, third[2].Content, third[4].Content)
		}
		if vu1 := sentMessages(t, sent[1]); vu1[1] == first[1] {
			t.Errorf("stream %v: VU 1's first user message is VU 0's", stream)
		}
	}
}

// A failed turn ends the conversation: the VU's next request is a first
// turn.
func TestConversationEndsOnFailure(t *testing.T) {
	l := builtin.NewLLM(builtin.LLMConfig{Tokens: 3, ErrorRate: 1}, nil)
	srv, _ := recordBodies(t, l)
	d := newDriver(t, Config{URL: srv.URL, Model: "m", InputTokens: &Lengths{Mean: 5}, Conversation: &Conversation{Turns: 3}})
	for range 2 {
		if r := do(d); r.Op != "chat turn 1" || r.Class != stats.Status5xx {
			t.Errorf("%s %s, want chat turn 1 failed", r.Op, r.Class)
		}
	}
	if d.ThinkTime(0) != 0 {
		t.Error("think time before a first turn")
	}
}

// Shared prefixes: each request draws one with the stated share, the K
// prefixes equally, the others one of their own of the same length; the
// same seed draws the same.
func TestSharedPrefixDraws(t *testing.T) {
	half := 0.5
	c := Config{URL: "http://127.0.0.1:1", Model: "m", Seed: 9, InputTokens: &Lengths{Mean: 3},
		SharedPrefix: &SharedPrefix{Prefixes: 4, Tokens: 10, Share: &half}}
	d := newDriver(t, c)
	seen := map[string]int{}
	const n = 800
	for i := range uint64(n) {
		body, err := d.reqs.body(i)
		if err != nil {
			t.Fatal(err)
		}
		msgs := sentMessages(t, string(body))
		if msgs[0].Role != "system" || len(strings.Fields(msgs[0].Content)) != 10 {
			t.Fatalf("request %d: %+v, want a system prompt of 10 words first", i, msgs)
		}
		seen[msgs[0].Content]++
	}
	shared := 0
	for p, k := range seen {
		if k == 1 {
			continue
		}
		shared += k
		if k < n/8-45 || k > n/8+45 { // σ ≈ 9.4 of 800 draws of 1/8
			t.Errorf("prefix %.20q… drawn %d times of %d", p, k, n)
		}
	}
	// 800 draws of p = 0.5: σ = 14; 4 σ either side.
	if shared < n/2-56 || shared > n/2+56 || len(seen) != 4+n-shared {
		t.Errorf("%d of %d requests with a shared prefix, %d prefixes; want half, 4 shared and the rest each its own", shared, n, len(seen))
	}
	again := newDriver(t, c)
	a, _ := d.reqs.body(17)
	b, _ := again.reqs.body(17)
	if string(a) != string(b) {
		t.Error("the same seed drew another request")
	}
}

func TestConversationConfigProblems(t *testing.T) {
	bad := 1.5
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Prompts: []string{"a"}, Conversation: &Conversation{Turns: 2}}, "needs input_tokens"},
		{Config{InputTokens: &Lengths{Mean: 1}, Conversation: &Conversation{Turns: 0}}, "turns 0"},
		{Config{InputTokens: &Lengths{Mean: 1}, Endpoint: EndpointCompletions, Conversation: &Conversation{Turns: 2}}, "need endpoint chat"},
		{Config{InputTokens: &Lengths{Mean: 1}, SharedPrefix: &SharedPrefix{Prefixes: 1, Tokens: 1, Share: &bad}}, "share 1.5"},
		{Config{InputTokens: &Lengths{Mean: 1}, SharedPrefix: &SharedPrefix{Tokens: 1}}, "prefixes 0"},
	} {
		tc.c.URL, tc.c.Model = "http://127.0.0.1:1", "m"
		errs := tc.c.Validate()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%+v: %v, want one problem with %q", tc.c, errs, tc.want)
		}
	}
}

// A gateway's error body not in the OpenAI shape is kept in the message,
// on one line and cut, rather than the status alone.
func TestErrorBodyOfAnotherShape(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"{\"status\": \"failure\",\n \"message\": \"upstream timed out\"}", `HTTP 502 Bad Gateway: {"status": "failure", "message": "upstream timed out"}`},
		{`{"error": {"message": "no such model"}}`, "HTTP 502 Bad Gateway: no such model"},
		{"", "HTTP 502 Bad Gateway"},
		{strings.Repeat("é", 400), "HTTP 502 Bad Gateway: " + strings.Repeat("é", 150) + "..."},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, tc.body)
		}))
		d := newDriver(t, Config{URL: srv.URL, Model: "m", Prompts: []string{"hi"}})
		if r := do(d); r.Class != stats.Status5xx || r.Message != tc.want {
			t.Errorf("body %.30q: %s %q, want %q", tc.body, r.Class, r.Message, tc.want)
		}
		srv.Close()
	}
}

// VUs hold their conversations side by side: each goes through its own
// turns in order, whatever the others do at the same time.
func TestConversationsOfManyVUs(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: 2})
	d := newDriver(t, Config{URL: srv.URL, Model: "m", InputTokens: &Lengths{Mean: 3}, Conversation: &Conversation{Turns: 3}})
	const vus = 8
	ops := make([][]string, vus)
	var wg sync.WaitGroup
	for vu := range vus {
		wg.Go(func() {
			for range 6 {
				var r driver.Result
				d.Do(context.Background(), vu, &r)
				ops[vu] = append(ops[vu], r.Op)
			}
		})
	}
	wg.Wait()
	want := "chat turn 1,chat turn 2,chat turn 3,chat turn 1,chat turn 2,chat turn 3"
	for vu, o := range ops {
		if strings.Join(o, ",") != want {
			t.Errorf("VU %d: %v", vu, o)
		}
	}
}
