package httpdriver

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/stats"
)

// TestDoFailureMessageShowsBody: "HTTP 500 Internal Server Error" alone
// hides what the server said; the start of the body goes with it.
func TestDoFailureMessageShowsBody(t *testing.T) {
	const body = `{"status":"failure","message":"Something went wrong"}`
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(body + "\n"))
		}))
		d := newDriver(t, c.config(ts, "/"))
		for range 2 { // the body was read: the connection is reused
			r, _ := do(context.Background(), d, 0)
			want := "HTTP 500 Internal Server Error: " + body
			if r.Class != stats.Status5xx || r.Message != want || r.Counters[stats.BodyBytes] != int64(len(body)+1) {
				t.Errorf("got %v %q (%d bytes), want %q", r.Class, r.Message, r.Counters[stats.BodyBytes], want)
			}
		}
		if n := ts.conns.Load(); n != 1 {
			t.Errorf("2 requests opened %d connections, want 1", n)
		}
	})
}

// TestDoFailureMessageBounded: a hostile error body (long, chunked, with
// line breaks, control characters, a long reason phrase) gives a message
// on one printable line, bounded, its start kept whole; a binary body is
// left out. The whole body is still counted.
func TestDoFailureMessageBounded(t *testing.T) {
	long := strings.Repeat("é", 300) + strings.Repeat("z", 100<<10) // 600 bytes of 2-byte runes, then 100 KiB
	for _, tc := range []struct {
		name, reason, body string
		want               string
	}{
		{"text", "Oops", "line one\r\n\tline\x1b[31m two", "HTTP 502 Oops: line one line [31m two"},
		{"long", strings.Repeat("r", 300), long,
			"HTTP 502 " + strings.Repeat("r", reasonMax) + ": " + strings.Repeat("é", sampleBodyMax/2) + "..."},
		{"cut rune", "", "a" + long, "HTTP 502 Bad Gateway: a" + strings.Repeat("é", sampleBodyMax/2-1) + "..."},
		{"binary", "Bad Gateway", "\x1f\x8b\x08\x00\xff\xfe gzip", "HTTP 502 Bad Gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
				for readRequest(br) {
					w := bufio.NewWriter(c)
					_, _ = w.WriteString("HTTP/1.1 502 " + tc.reason + "\r\nTransfer-Encoding: chunked\r\n\r\n")
					for b := tc.body; b != ""; {
						n := min(len(b), 1000)
						_, _ = w.WriteString(strconv.FormatInt(int64(n), 16) + "\r\n" + b[:n] + "\r\n")
						b = b[n:]
					}
					_, _ = w.WriteString("0\r\n\r\n")
					if w.Flush() != nil {
						return
					}
				}
			}
			forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
				d := newDriver(t, cfg)
				for range 2 {
					r, _ := do(context.Background(), d, 0)
					if r.Class != stats.Status5xx || r.Message != tc.want || r.Counters[stats.BodyBytes] != int64(len(tc.body)) {
						t.Errorf("got %v %q (%d bytes), want %q (%d bytes)", r.Class, r.Message, r.Counters[stats.BodyBytes], tc.want, len(tc.body))
					}
					if !utf8.ValidString(r.Message) || strings.IndexFunc(r.Message, notPrintable) >= 0 {
						t.Errorf("message %q is not one printable line", r.Message)
					}
				}
				if n := s.conns.Load(); n != 1 {
					t.Errorf("2 requests opened %d connections, want 1", n)
				}
			})
		})
	}
}

// TestDoFailureMessageCutsNoSecret: a server that echoes the request's
// Authorization into an error body longer than what is kept; the cut must
// not leave the start of the secret, which no scrubber could recognise.
func TestDoFailureMessageCutsNoSecret(t *testing.T) {
	const token = "sk-PROJ-0123456789abcdef"
	for _, pad := range []int{sampleBodyMax - 16, sampleBodyMax - 9} { // cut after "Bearer sk-PROJ-0", "sk-PROJ-0"
		forEachClient(t, func(t *testing.T, c client) {
			ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				echo := r.Header.Get("Authorization")
				if pad == sampleBodyMax-9 {
					echo = strings.TrimPrefix(echo, "Bearer ")
				}
				_, _ = w.Write([]byte(strings.Repeat("a", pad) + " " + echo + strings.Repeat(" and more", 100)))
			}))
			cfg := c.config(ts, "/")
			cfg.Header = http.Header{"Authorization": {"Bearer " + token}}
			r, _ := do(context.Background(), newDriver(t, cfg), 0)
			if r.Class != stats.Status4xx || !strings.HasPrefix(r.Message, "HTTP 401 Unauthorized: aaaa") || !strings.HasSuffix(r.Message, "...") {
				t.Fatalf("got %v %q", r.Class, r.Message)
			}
			for i := 0; i+6 <= len(token); i++ {
				if strings.Contains(r.Message, token[i:i+6]) {
					t.Errorf("message %q holds %q, 6 bytes of the secret", r.Message, token[i:i+6])
				}
			}
		})
	}
}

func notPrintable(r rune) bool { return !unicode.IsPrint(r) }

func TestStatusMessage(t *testing.T) {
	for _, tc := range []struct {
		code         int
		reason, head string
		total        int64
		secrets      []string
		want         string
	}{
		{404, "", "", 0, nil, "HTTP 404 Not Found"},
		{404, "Gone Fishing", "", 0, nil, "HTTP 404 Gone Fishing"},
		{500, "", "  \r\n ", 5, nil, "HTTP 500 Internal Server Error"},
		{500, "", "oops\n", 5, nil, "HTTP 500 Internal Server Error: oops"},
		{500, "", "oops", 9, nil, "HTTP 500 Internal Server Error: oops..."},
		{500, "", "caf\xc3", 9, nil, "HTTP 500 Internal Server Error: caf..."}, // a rune cut at the end
		{500, "", "caf\xc3\x28", 6, nil, "HTTP 500 Internal Server Error"},     // not UTF-8
		{599, "", "x", 1, nil, "HTTP 599: x"},
		{401, "", "echo: Bearer sk-ab", 90, []string{"Bearer sk-abcdef", "sk-abcdef"}, "HTTP 401 Unauthorized: echo:..."},
		{401, "", "echo: sk-ab", 90, []string{"Bearer sk-abcdef", "sk-abcdef"}, "HTTP 401 Unauthorized: echo:..."},
		{401, "", "echo: sk-ab", 11, []string{"sk-abcdef"}, "HTTP 401 Unauthorized: echo: sk-ab"}, // not cut: the body ends there
		{401, "", "echo: sk", 90, []string{"sk-abcdef"}, "HTTP 401 Unauthorized: echo: sk..."},    // under minFragment
		{401, strings.Repeat("r", reasonMax-5) + " sk-abcdef", "", 0, []string{"sk-abcdef"}, "HTTP 401 " + strings.Repeat("r", reasonMax-5)},
		// issue 18: the edges
		{401, "", "echo: sk-", 90, []string{"sk-abcdef"}, "HTTP 401 Unauthorized: echo:..."},                                                       // minFragment bytes: dropped
		{500, "", strings.Repeat("x", sampleBodyMax), sampleBodyMax, nil, "HTTP 500 Internal Server Error: " + strings.Repeat("x", sampleBodyMax)}, // all of it kept: no "..."
		{500, "", "\x00oops", 5, nil, "HTTP 500 Internal Server Error"},                                                                            // a NUL first: not text
		{500, "", " \t oops", 7, nil, "HTTP 500 Internal Server Error: oops"},                                                                      // no space before the text
	} {
		if got := statusMessage(tc.code, tc.reason, []byte(tc.head), tc.total, tc.secrets); got != tc.want {
			t.Errorf("statusMessage(%d, %q, %q, %d) = %q, want %q", tc.code, tc.reason, tc.head, tc.total, got, tc.want)
		}
	}
}

// TestSinkKeepsOnlyTheStart (issue 18): an error body that arrives in
// pieces is counted whole, but only its first sampleBodyMax bytes are kept
// for the message, however the pieces fall; a body shorter than announced
// is io.ErrUnexpectedEOF.
func TestSinkKeepsOnlyTheStart(t *testing.T) {
	body := strings.Repeat("0123456789", 100)
	s := newBodySink()
	s.reset(int64(len(body)), true)
	for _, piece := range []string{body[:300], body[300:700], body[700:]} {
		if n, err := s.Write([]byte(piece)); n != len(piece) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if s.n != int64(len(body)) || string(s.head) != body[:sampleBodyMax] {
		t.Errorf("counted %d bytes, kept %d; want %d and the first %d", s.n, len(s.head), len(body), sampleBodyMax)
	}
	s.reset(10, false)
	if n, err := s.ReadFrom(strings.NewReader("short")); n != 5 || err != io.ErrUnexpectedEOF || len(s.head) != 0 {
		t.Errorf("ReadFrom of 5 bytes of 10: %d, %v, kept %d bytes", n, err, len(s.head))
	}
}
