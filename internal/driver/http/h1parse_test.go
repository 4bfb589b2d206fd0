package httpdriver

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// parseSplit parses resp given in two reads, split at k, as a loop
// connection's buffer holds it: what a feed leaves unused is fed again
// with the next read. It returns the parser and the first error.
func parseSplit(resp string, k int, noBody bool) (*h1Parser, error) {
	var sink bodySink
	p := &h1Parser{noBody: noBody, sink: &sink, keepBody: func(status int) bool { return status >= 400 }}
	p.reset()
	pending := ""
	for _, read := range []string{resp[:k], resp[k:]} {
		pending += read
		used, err := p.feed([]byte(pending))
		pending = pending[used:]
		if err != nil || p.phase == phaseDone {
			return p, err
		}
	}
	return p, nil
}

// TestParserFramesEveryResponseAtEverySplit: each response, however its
// bytes are split between two reads, is read to the same end, with the
// same status, body length, and whether the connection closes after it;
// the bytes after it are left for the next response.
func TestParserFramesEveryResponseAtEverySplit(t *testing.T) {
	const next = "HTTP/1.1 200 OK\r\n" // the start of a next response, never read into this one
	for _, tc := range []struct {
		name, resp string
		noBody     bool
		status     int
		body       int64
		close      bool
		reason     string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, 5, false, ""},
		{"zero length", "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", false, 200, 0, false, ""},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nTrailer: v\r\n\r\n", false, 200, 8, false, ""},
		{"gzip then chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n", false, 200, 1, false, ""},
		{"HTTP/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false, 200, 2, true, ""},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false, 200, 2, false, ""},
		{"Connection: close", "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok", false, 200, 2, true, ""},
		{"interim answers first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false, 204, 0, false, ""},
		{"304 has no body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", false, 304, 0, false, ""},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", true, 200, 0, false, ""},
		{"error keeps its reason", "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!", false, 404, 3, false, "Not Found"},
		{"bare line feeds", "HTTP/1.1 503 Busy\nContent-Length: 1\n\nx", false, 503, 1, false, "Busy"},
		{"no reason", "HTTP/1.1 500\r\nContent-Length: 0\r\n\r\n", false, 500, 0, false, ""},
		{"101 ends the connection's HTTP", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", false, 101, 0, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k := 0; k <= len(tc.resp); k++ {
				p, err := parseSplit(tc.resp+next, k, tc.noBody)
				if err != nil || p.phase != phaseDone {
					t.Fatalf("split at %d: phase %d, error %v", k, p.phase, err)
				}
				if p.status != tc.status || p.sink.n != tc.body || p.close != tc.close || p.reason != tc.reason {
					t.Fatalf("split at %d: status %d, body %d, close %v, reason %q; want %d, %d, %v, %q",
						k, p.status, p.sink.n, p.close, p.reason, tc.status, tc.body, tc.close, tc.reason)
				}
				if p.got != int64(len(tc.resp)) {
					t.Fatalf("split at %d: parsed %d bytes of a %d-byte response", k, p.got, len(tc.resp))
				}
			}
		})
	}
}

// TestParserReadsToTheEndWhenNoLengthIsGiven: a body with neither length
// nor chunks ends with the connection, which then closes.
func TestParserReadsToTheEndWhenNoLengthIsGiven(t *testing.T) {
	p, err := parseSplit("HTTP/1.1 200 OK\r\n\r\nall of this", 10, false)
	if err != nil || p.phase != phaseUntilEOF || p.sink.n != 11 {
		t.Fatalf("phase %d, body %d, error %v: want the body read on to the end", p.phase, p.sink.n, err)
	}
	if err := p.eof(0); err != nil || p.phase != phaseDone || !p.close {
		t.Errorf("at the end: %v, phase %d, close %v", err, p.phase, p.close)
	}
}

// TestParserEndsEarlyWithTheRightError: an end before the answer is the
// server closing the connection (which a request may be sent again for);
// an end inside it is a body cut short.
func TestParserEndsEarlyWithTheRightError(t *testing.T) {
	var sink bodySink
	p := &h1Parser{sink: &sink}
	p.reset()
	if err := p.eof(0); !errors.Is(err, errServerClosed) {
		t.Errorf("end before any byte: %v, want %v", err, errServerClosed)
	}
	if err := p.eof(len("HTTP/1.1 20")); !errors.Is(err, io.ErrUnexpectedEOF) { // a line cut short, not parsed
		t.Errorf("end inside the status line: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	for _, cut := range []string{"HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"} {
		p, err := parseSplit(cut, len(cut), false)
		if err != nil {
			t.Fatalf("%q: %v", cut, err)
		}
		if err := p.eof(0); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q then the end: %v, want %v", cut, err, io.ErrUnexpectedEOF)
		}
	}
}

// TestParserRefusesWhatIsNotHTTP11: each malformed answer is an error that
// names what is wrong, wherever the reads split it.
func TestParserRefusesWhatIsNotHTTP11(t *testing.T) {
	for _, tc := range []struct{ resp, want string }{
		{"HTTP/2 200 OK\r\n\r\n", "malformed HTTP response"},
		{"SSH-2.0-OpenSSH\r\n", "malformed HTTP response"},
		{"HTTP/1.1 2x0 OK\r\n\r\n", "malformed HTTP status code"},
		{"HTTP/1.1 099 Low\r\n\r\n", "malformed HTTP status code"},
		{"HTTP/1.1 200OK\r\n\r\n", "malformed HTTP response"},
		{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed response header line"},
		{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "malformed Content-Length"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n", "malformed chunked body"},
		{"HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 70) + "\r\n", "headers larger than"},
	} {
		for _, k := range []int{0, len(tc.resp) / 2, len(tc.resp)} {
			_, err := parseSplit(tc.resp, k, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%.40q split at %d: %v, want an error with %q", tc.resp, k, err, tc.want)
			}
		}
	}
}

func TestParseUint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		base int64
		n    int64
		ok   bool
	}{
		{"0", 10, 0, true}, {"1024", 10, 1024, true}, {"999999999999999", 10, 999999999999999, true},
		{"1a", 16, 26, true}, {"FF", 16, 255, true}, {"fffffffffffffff", 16, 1<<60 - 1, true},
		{"", 10, 0, false}, {"1a", 10, 0, false}, {"-1", 10, 0, false}, {"+1", 10, 0, false}, {" 1", 10, 0, false},
		{"1000000000000000", 10, 0, false}, {"g", 16, 0, false}, {"0x1", 16, 0, false},
	} {
		if n, ok := parseUint([]byte(tc.in), tc.base); n != tc.n || ok != tc.ok {
			t.Errorf("parseUint(%q, %d) = %d, %v; want %d, %v", tc.in, tc.base, n, ok, tc.n, tc.ok)
		}
	}
}
