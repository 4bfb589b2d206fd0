package httpdriver

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// The matrix of issue 27: server behaviours that the open model's client
// (on fasthttp, before) got wrong, each against a raw server that counts
// what it sent, on every HTTP/1.1 path (the closed model's loop, the
// goroutine path of the open model and of TLS, net/http's pool and its
// TLS). Where net/http cannot follow a rule, the test says so and docs/how-it-measures.md
// lists the row.

// counted is what a raw server sent and read, over every connection.
type counted struct {
	sent atomic.Int64 // bytes written
	reqs atomic.Int64 // requests read
}

// send writes b to c and counts it: before it writes, so that a client
// that has read it finds it counted; what was not written is taken back.
func (k *counted) send(c net.Conn, b string) bool {
	k.sent.Add(int64(len(b)))
	n, err := c.Write([]byte(b))
	k.sent.Add(int64(n - len(b)))
	return err == nil
}

// read reads one request and counts it; false when the client went.
func (k *counted) read(br *bufio.Reader) bool {
	if !readRequest(br) {
		return false
	}
	k.reqs.Add(1)
	return true
}

// chunk is one chunk of n bytes, framed.
func chunk(n int) string { return fmt.Sprintf("%x\r\n%s\r\n", n, strings.Repeat("c", n)) }

// TestCutShortAnswersFail (rule 1): an answer the server ends before its
// end is a failure of the protocol class, whichever part it cut, with the
// body bytes that came counted, and the connection not reused.
func TestCutShortAnswersFail(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct {
		name, answer string
		body         int64
	}{
		{"three 64 KiB chunks then the end", head + chunk(65536) + chunk(65536) + chunk(65536), 3 * 65536},
		{"no last chunk", head + chunk(5), 5},
		{"no line break after the last chunk", head + chunk(5) + "0\r\n", 5},
		{"inside a chunk", head + "a\r\nhello", 5},
		{"inside a chunk's size", head + chunk(5) + "1", 5},
		{"trailers never ended", head + chunk(5) + "0\r\nX-Sum: 1\r\n", 5},
		{"inside Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart", 4},
		{"inside the headers", "HTTP/1.1 200 OK\r\nContent-Le", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k counted
			serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
				if k.read(br) {
					k.send(c, tc.answer) // and close
				}
			}
			forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
				k.sent.Store(0)
				d := newDriver(t, cfg)
				for i := range 2 {
					r, _ := do(context.Background(), d, 0)
					body := r.Counters[stats.BodyBytes]
					if r.Class != stats.Protocol || body > tc.body {
						t.Errorf("request %d: %v %q, body %d bytes; want protocol after at most %d", i, r.Class, r.Message, body, tc.body)
					}
					if ownsH1(cfg.withDefaults()) && (body != tc.body || !strings.Contains(r.Message, "cut short")) {
						t.Errorf("request %d: %q, body %d bytes; want it named cut short after %d", i, r.Message, body, tc.body)
					}
				}
				if ownsH1(cfg.withDefaults()) && !cfg.hasTLS() {
					if k.sent.Load() != 2*int64(len(tc.answer)) {
						t.Errorf("the server sent %d bytes, want %d", k.sent.Load(), 2*len(tc.answer))
					}
				}
				if n := s.conns.Load(); n != 2 {
					t.Errorf("%d connections for 2 requests, want 2", n)
				}
			})
		})
	}
}

// hasTLS tells whether c's URL is https.
func (c Config) hasTLS() bool { return strings.HasPrefix(c.URL, "https://") }

// TestInterimAnswersAreSkipped (rule 2): interim answers, any number up
// to the bound on headers, are skipped; the final answer decides the
// class, and the latency is to its end; TTFB is the first byte of any.
func TestInterimAnswersAreSkipped(t *testing.T) {
	const wait = 50 * time.Millisecond
	interim := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte(interim + "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"))
			if !s.sleep(wait) {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail"))
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		d := newDriver(t, cfg)
		for i := range 2 {
			r, took := do(context.Background(), d, 0)
			if r.Class != stats.Status5xx || r.Counters[stats.BodyBytes] != 4 || took < wait {
				t.Errorf("request %d: %v %q, body %d, after %v; want the final 500 after %v", i, r.Class, r.Message, r.Counters[stats.BodyBytes], took, wait)
			}
			// The final answer came wait after the interim ones: a TTFB
			// within the first half of that is the interim answers' (a busy
			// machine may note their arrival a few ms late).
			if r.TTFB <= 0 || r.TTFB-r.Connect >= took-wait/2 {
				t.Errorf("request %d: TTFB %v (connect %v) of %v, want the first interim answer's byte, about %v before the end", i, r.TTFB, r.Connect, took, wait)
			}
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("%d connections, want the one, kept", n)
		}
	})
}

// TestEndlessInterimAnswersHitTheBound: a server that answers every
// request with interim answers and never a final one fails each request
// at the bound on headers, and each request goes out: the next is never
// "answered" by the stream of the last.
func TestEndlessInterimAnswersHitTheBound(t *testing.T) {
	var k counted
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if !k.read(br) {
			return
		}
		for k.send(c, "HTTP/1.1 100 Continue\r\n\r\n") {
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		k.reqs.Store(0)
		cfg.Timeout = 5 * time.Second
		d := newDriver(t, cfg)
		const n = 3
		for i := range n {
			r, _ := do(context.Background(), d, 0)
			if r.Class != stats.Protocol {
				t.Errorf("request %d: %v %q, want protocol", i, r.Class, r.Message)
			}
			if ownsH1(cfg.withDefaults()) && !strings.Contains(r.Message, "64 KiB") {
				t.Errorf("request %d: %q, want the bound named", i, r.Message)
			}
		}
		if got := k.reqs.Load(); got != n {
			t.Errorf("the server read %d requests of %d", got, n)
		}
	})
}

// TestSwitchedConnectionIsNotReused (rule 3): a 101 ends what the
// connection can carry: the request fails (no upgrade was asked for) and
// the next goes on a new connection.
func TestSwitchedConnectionIsNotReused(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			// the 101, and the first bytes of the new protocol
			_, _ = c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n\x81\x05hello"))
		}
		s.sleep(time.Minute) // the new protocol: nothing more
	}
	for _, expect := range []string{"", "101"} {
		forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
			cfg.Timeout, cfg.ExpectStatus = 2*time.Second, expect
			d := newDriver(t, cfg)
			for i := range 2 {
				r, took := do(context.Background(), d, 0)
				if (r.Class == stats.OK) != (expect == "101") || took > time.Second || r.TTFB <= 0 {
					t.Errorf("expecting %q, request %d: %v %q after %v, TTFB %v; want it judged at once", expect, i, r.Class, r.Message, took, r.TTFB)
				}
				if ownsH1(cfg.withDefaults()) && expect == "" && r.Class != stats.StatusOther {
					t.Errorf("request %d: %v, want status_other", i, r.Class)
				}
				if r.Counters[stats.StrayAnswers] != 0 {
					t.Errorf("request %d: the new protocol's bytes counted as a stray answer", i)
				}
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("%d connections for 2 requests, want 2: none reused after a 101", n)
			}
		})
	}
}

// TestStrayAnswersAreCounted (rule 5): bytes behind a complete answer,
// and an answer written while the connection was idle, close the
// connection and are counted; none is taken as the next request's answer.
func TestStrayAnswersAreCounted(t *testing.T) {
	read, wrote := make(chan struct{}, 16), make(chan struct{}, 16)
	for _, tc := range []struct {
		name  string
		idle  bool
		serve func(s *rawServer, c net.Conn, br *bufio.Reader)
	}{
		{"behind the answer", false, func(s *rawServer, c net.Conn, br *bufio.Reader) {
			for readRequest(br) {
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"))
			}
		}},
		{"while idle", true, func(s *rawServer, c net.Conn, br *bufio.Reader) {
			for readRequest(br) {
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				select { // the client has the answer: now an unasked one
				case <-read:
				case <-s.done:
					return
				}
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"))
				wrote <- struct{}{}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachRawClient(t, tc.serve, func(t *testing.T, s *rawServer, cfg Config) {
				if !ownsH1(cfg.withDefaults()) {
					t.Skip("net/http takes a stray answer (behind the answer or while idle) as the next request's, when its reader has not run yet (docs/how-it-measures.md, HTTP rules)")
				}
				drain(read)
				drain(wrote)
				d := newDriver(t, cfg)
				var stray int64
				for i := range 3 {
					r, _ := do(context.Background(), d, 0)
					read <- struct{}{}
					stray += r.Counters[stats.StrayAnswers]
					if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 {
						t.Errorf("request %d: %v %q, body %d; want its own answer of 2", i, r.Class, r.Message, r.Counters[stats.BodyBytes])
					}
					if tc.idle {
						<-wrote // the stray answer is on its way before the next request
					}
				}
				if stray < 2 || s.conns.Load() != 3 {
					t.Errorf("%d stray answers counted, %d connections for 3 requests; want at least 2 and 3", stray, s.conns.Load())
				}
			})
		})
	}
}

// TestTLSPartialStrayIsNoAnswer: on TLS, part of a record the server
// wrote unasked (the rest still on its way), come with the answer's last
// bytes or later while the connection was idle, is not taken for TLS's
// own records: the connection goes, and the next request gets its own
// answer.
func TestTLSPartialStrayIsNoAnswer(t *testing.T) {
	for _, idle := range []bool{false, true} {
		t.Run(fmt.Sprintf("idle=%v", idle), func(t *testing.T) { partialStray(t, idle) })
	}
}

// partialStray is TestTLSPartialStrayIsNoAnswer's case: the stray's first
// bytes written with the answer, or once the client has read it (idle).
func partialStray(t *testing.T, idle bool) {
	half, release, read := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var conns atomic.Int64
	ln, conf, ca := tlsListener(t)
	t.Cleanup(func() { close(release); ln.Close() })
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			sc := &splitConn{Conn: raw, half: half, release: release}
			c := tls.Server(sc, conf)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for readRequest(br) {
					_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
					if n != 1 {
						continue
					}
					if idle {
						<-read
					}
					sc.split.Store(true) // a stray answer, its record cut in two
					_, _ = c.Write([]byte("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"))
				}
			}()
		}
	}()
	d := newDriver(t, Config{URL: "https://" + ln.Addr().String() + "/", Proto: ProtoH1, CAFile: ca})
	if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
		t.Fatalf("first: %v %q", r.Class, r.Message)
	}
	close(read)
	<-half // the record's first bytes are sent, the rest to come
	r, _ := do(context.Background(), d, 0)
	if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 || conns.Load() != 2 {
		t.Errorf("second: %v %q, body %d, %d connections; want its own answer on a new connection",
			r.Class, r.Message, r.Counters[stats.BodyBytes], conns.Load())
	}
}

// tlsListener is a TCP listener on 127.0.0.1, the TLS configuration of a
// server on it (HTTP/1.1 by ALPN), and the path of its CA.
func tlsListener(t *testing.T) (net.Listener, *tls.Config, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert := httptest.NewUnstartedServer(nil) // only for its certificate
	cert.StartTLS()
	conf := cert.TLS.Clone()
	conf.NextProtos = []string{"http/1.1"}
	ca := writeCA(t, cert.Certificate().Raw)
	cert.Close()
	return ln, conf, ca
}

// splitConn writes, once split is set, the first 5 bytes of the next
// write, says so on half, and the rest when release is closed.
type splitConn struct {
	net.Conn
	split         atomic.Bool
	half, release chan struct{}
}

func (c *splitConn) Write(b []byte) (int, error) {
	if !c.split.CompareAndSwap(true, false) || len(b) <= 5 {
		return c.Conn.Write(b)
	}
	n, err := c.Conn.Write(b[:5])
	close(c.half)
	if err != nil {
		return n, err
	}
	<-c.release
	m, err := c.Conn.Write(b[5:])
	return n + m, err
}
