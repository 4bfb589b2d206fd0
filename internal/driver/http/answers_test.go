package httpdriver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// Answers that come early, in part, stale, or exactly filling the loop's
// read buffer, from the hostile raw servers of hostile_test.go.

// TestLoopTakesNoStaleAnswer: a server that writes a second answer behind
// the first, before the next request was sent, has written no answer to
// that request. The loop closes the connection; the next request gets its
// own answer on a new one. (fasthttp, which the open model used before
// issue 27, took the stale answer.)
func TestLoopTakesNoStaleAnswer(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
				"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"))
		}
	}
	s := startRaw(t, false, serve)
	d := newDriver(t, Config{URL: s.URL + "/", viaLoop: true})
	for i := range 3 {
		if r, _ := do(context.Background(), d, 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 {
			t.Errorf("request %d: %v %q, %d bytes; want its own answer of 2", i, r.Class, r.Message, r.Counters[stats.BodyBytes])
		}
	}
	if n := s.conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3: none kept with a stale answer in it", n)
	}

	// An answer that fills the loop's read buffer exactly: what may follow
	// it is still in the socket, unread, and as stale.
	head := "HTTP/1.1 200 OK\r\nContent-Length: 0000\r\n\r\n"
	body := readBufSize - len(head)
	full := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %04d\r\n\r\n%s", body, strings.Repeat("f", body))
	s = startRaw(t, false, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte(full + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"))
		}
	})
	d = newDriver(t, Config{URL: s.URL + "/", viaLoop: true})
	for i := range 2 {
		if r, _ := do(context.Background(), d, 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != int64(body) {
			t.Errorf("full buffer, request %d: %v %q, %d bytes; want its own answer of %d", i, r.Class, r.Message, r.Counters[stats.BodyBytes], body)
		}
	}
}

// TestAnswerBeforeTheBodyIsTaken: a server that answers as soon as it has
// a request's headers, then reads the body, has answered it: the answer,
// come while the client was still writing, is the request's.
func TestAnswerBeforeTheBodyIsTaken(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nsoon"))
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return
			}
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Method, cfg.Body, cfg.Timeout = http.MethodPost, bytes.Repeat([]byte("b"), 8<<20), 5*time.Second
		d := newDriver(t, cfg)
		for i := range 2 {
			if r, took := do(context.Background(), d, 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != 4 {
				t.Errorf("request %d: %v %q, %d bytes after %v; want the early answer", i, r.Class, r.Message, r.Counters[stats.BodyBytes], took)
			}
		}
	})
}

// TestPartialAnswerIsNotRetried: a kept-alive connection on which the
// server starts an answer and then hangs up failed a request that was
// answered in part: it is reported, with its first byte, not sent again.
func TestPartialAnswerIsNotRetried(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 20")) // and close it
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		d := newDriver(t, cfg)
		if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
			t.Fatalf("first request: %v %q", r.Class, r.Message)
		}
		r, _ := do(context.Background(), d, 0)
		if r.Class == stats.OK || r.TTFB == 0 || s.conns.Load() != 1 {
			t.Errorf("second request: %v %q, TTFB %v, %d connections; want a failure with its first byte, not sent again",
				r.Class, r.Message, r.TTFB, s.conns.Load())
		}
	})
}

// TestResetInTheBodyIsProtocol: a connection reset after the answer began
// is a broken answer (protocol), not a failure to connect.
func TestResetInTheBodyIsProtocol(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if !readRequest(br) {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npart"))
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // the close sends a reset
		}
		s.sleep(20 * time.Millisecond) // the part is read before the reset
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		if strings.HasPrefix(cfg.URL, "https") {
			return // the reset comes under TLS's own record errors
		}
		r, _ := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class != stats.Protocol {
			t.Errorf("%v %q, want protocol", r.Class, r.Message)
		}
	})
}

// TestRequestSayingCloseIsAnsweredOnEach: on perflab's own HTTP/1.1
// client (the goroutine path, the loop), a request that says "Connection: close" goes on a new
// connection each time, even to a server that neither says so in its
// answer nor closes; net/http keeps its connection.
func TestRequestSayingCloseIsAnsweredOnEach(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Method, cfg.Body, cfg.Header = http.MethodPost, []byte("{}"), http.Header{"Connection": {"close"}}
		d := newDriver(t, cfg)
		for i := range 3 {
			if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
				t.Errorf("request %d: %v %q", i, r.Class, r.Message)
			}
		}
		if n := s.conns.Load(); n != 3 && ownsH1(cfg.withDefaults()) {
			t.Errorf("%d connections, want 3", n)
		}
	})
}

// TestLoopKeepsAConnectionWhoseAnswerFillsTheBuffer: an answer that ends
// exactly at the end of the loop's read buffer, with nothing behind it,
// leaves its connection as good as any: it is kept.
func TestLoopKeepsAConnectionWhoseAnswerFillsTheBuffer(t *testing.T) {
	for _, size := range []int{readBufSize, 2 * readBufSize} {
		head := "HTTP/1.1 200 OK\r\nContent-Length: 000000\r\n\r\n"
		body := size - len(head)
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %06d\r\n\r\n%s", body, strings.Repeat("a", body))
		s := startRaw(t, false, func(s *rawServer, c net.Conn, br *bufio.Reader) {
			for readRequest(br) {
				_, _ = c.Write([]byte(resp))
			}
		})
		d := newDriver(t, Config{URL: s.URL + "/", viaLoop: true})
		for i := range 3 {
			if r, _ := do(context.Background(), d, 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != int64(body) {
				t.Errorf("%d bytes, request %d: %v %q, %d bytes", size, i, r.Class, r.Message, r.Counters[stats.BodyBytes])
			}
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("answers of %d bytes: %d connections, want 1", size, n)
		}
	}
}

// TestEarlyAnswerThenCloseIsTheAnswer: a server that answers 413 as soon
// as it has a request's headers and closes the connection without reading
// the body answered the request: its answer is recorded, though writing
// the rest of the body failed, and the request is not sent again.
func TestEarlyAnswerThenCloseIsTheAnswer(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig"))
		_ = c.(*net.TCPConn).CloseWrite()
		s.sleep(50 * time.Millisecond) // then close, the body unread: a reset
	}
	forEachPlainClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Method, cfg.Body = http.MethodPost, bytes.Repeat([]byte("b"), 8<<20)
		r, _ := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class != stats.Status4xx || r.Counters[stats.Retries] != 0 {
			t.Errorf("%v %q, %d retries; want the 413, not sent again", r.Class, r.Message, r.Counters[stats.Retries])
		}
	})
}
