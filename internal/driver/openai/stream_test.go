package openaidriver

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/stats"
)

const (
	tok  = `data: {"choices":[{"delta":{"content":"x"}}]}` + "\n\n"
	done = "data: [DONE]\n\n"
)

// Streams that break the protocol are stats.Protocol, with a message that
// says how; valid variations of the format are OK.
func TestStreamsThatBreakTheProtocol(t *testing.T) {
	tests := []struct {
		name, ctype, body string
		class             stats.Class
		msg               string // prefix of Result.Message
		tokens            int64
	}{
		{"valid", "text/event-stream", tok + tok + done, stats.OK, "", 2},
		{"CRLF, comments, other fields, split data", "text/event-stream; charset=utf-8",
			": ping\r\nevent: message\r\nid: 1\r\ndata: {\"choices\":\r\ndata: [{\"text\":\"x\"}]}\r\n\r\n" + tok + done, stats.OK, "", 2},
		{"role-only first chunk is no token", "text/event-stream",
			`data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n" + tok + done, stats.OK, "", 1},
		{"no final blank line", "text/event-stream", tok + "data: [DONE]", stats.OK, "", 1},
		{"malformed chunk", "text/event-stream", tok + "data: {\"choices\": [\n\n" + done, stats.Protocol, "cannot parse stream chunk: ", 0},
		{"no [DONE]", "text/event-stream", tok + tok, stats.Protocol, "stream ended without data: [DONE]", 0},
		{"error event", "text/event-stream", tok + `data: {"error":{"message":"overloaded"}}` + "\n\n", stats.Protocol, "error in stream: overloaded", 0},
		{"not an event stream", "application/json", `{"choices":[]}`, stats.Protocol, `stream asked for, got Content-Type "application/json"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, Prompts: []string{"x"}})
			r := do(d)
			if r.Class != tt.class || !strings.HasPrefix(r.Message, tt.msg) || (tt.msg == "" && r.Message != "") {
				t.Errorf("class %v message %q, want %v %q", r.Class, r.Message, tt.class, tt.msg)
			}
			if got := d.Stats().OutputTokens; got != tt.tokens {
				t.Errorf("%d output tokens counted, want %d", got, tt.tokens)
			}
			if r.Class == stats.OK && (r.BytesRecv != int64(len(tt.body)) || r.TTFB <= 0) {
				t.Errorf("BytesRecv %d, want %d; TTFB %v", r.BytesRecv, len(tt.body), r.TTFB)
			}
			var n [stats.NumMeasures]int64
			for _, m := range r.Measures {
				n[m.Measure]++
			}
			want := [stats.NumMeasures]int64{}
			if tt.tokens > 0 {
				want = [stats.NumMeasures]int64{stats.TTFT: 1, stats.TTST: min(tt.tokens-1, 1), stats.ITL: tt.tokens - 1,
					stats.TPOT: min(tt.tokens-1, 1), stats.OutputLength: 1, stats.NTPOT: 1}
			}
			if n != want || r.Counters[stats.OutputTokens] != tt.tokens {
				t.Errorf("measures %v (TTFT, TTST, ITL, TPOT, lengths, NTPOT), want %v; output tokens %d", n, want, r.Counters[stats.OutputTokens])
			}
		})
	}
}

// Whole answers that do not parse, or hold no answer, are stats.Protocol.
func TestWholeAnswersThatBreakTheProtocol(t *testing.T) {
	tests := []struct {
		endpoint, status, body, msg string
	}{
		{EndpointChat, "200", `{"choices":`, "cannot parse answer: "},
		{EndpointChat, "200", `{"choices":[]}`, "answer has no choices"},
		{EndpointEmbeddings, "200", `{"data":[]}`, "answer has no data"},
		{EndpointChat, "302", ``, "HTTP 302 Found: want 2xx"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if tt.status == "302" {
				w.Header().Set("Location", "/elsewhere")
				w.WriteHeader(http.StatusFound)
				return
			}
			_, _ = io.WriteString(w, tt.body)
		}))
		r := do(newDriver(t, Config{URL: srv.URL, Model: "m", Endpoint: tt.endpoint, Prompts: []string{"x"}}))
		srv.Close()
		if r.Class != stats.Protocol || !strings.HasPrefix(r.Message, tt.msg) || r.TTFB != 0 {
			t.Errorf("%s %s %q: %v %q TTFB %v, want protocol %q", tt.endpoint, tt.status, tt.body, r.Class, r.Message, r.TTFB, tt.msg)
		}
	}
}

func TestReadEventsLimits(t *testing.T) {
	long := "data: " + strings.Repeat("x", maxEvent+100) + "\n\n"
	err := readEvents(bufio.NewReaderSize(strings.NewReader(long), 16), func([]byte) (bool, error) { return false, nil })
	var pe *protocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.msg, "longer than") {
		t.Errorf("over-long line: %v", err)
	}
	var got []string
	err = readEvents(bufio.NewReaderSize(strings.NewReader("data:a\ndata: b\n\ndata:[DONE]\n\ndata: after\n\n"), 16),
		func(b []byte) (bool, error) { got = append(got, string(b)); return string(b) == "[DONE]", nil })
	if err != nil || strings.Join(got, "|") != "a\nb|[DONE]" {
		t.Errorf("events %q, %v", got, err)
	}
}
