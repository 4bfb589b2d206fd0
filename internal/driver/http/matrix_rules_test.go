package httpdriver

import (
	"bufio"
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// More of issue 27's matrix: bounds, what RFC 9112 has a client accept
// and refuse, resets, and the bytes counted.

// answerEach serves every request of a connection with answer.
func answerEach(k *counted, answer string) func(s *rawServer, c net.Conn, br *bufio.Reader) {
	return func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for k.read(br) && k.send(c, answer) {
		}
	}
}

// TestAnswersPastABoundFail (rule 6): past a bound, an answer is a
// protocol failure whose message names the bound, and perflab reads no
// further than the bound asks.
func TestAnswersPastABoundFail(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\n"
	fields := func(n, size int) string {
		return strings.Repeat("X-Pad: "+strings.Repeat("p", size)+"\r\n", n)
	}
	chunked := ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"
	for _, tc := range []struct {
		name, answer, bound string
		nethttp             bool // net/http keeps this bound too (it names it its own way)
	}{
		{"a header line over 8 KiB", ok + fields(1, 9<<10) + "Content-Length: 0\r\n\r\n", "8 KiB", true},
		{"more than 512 header fields", ok + fields(600, 10) + "Content-Length: 0\r\n\r\n", "512", true},
		{"headers over 64 KiB", ok + fields(70, 1000) + "Content-Length: 0\r\n\r\n", "64 KiB", true},
		{"trailers over 4 KiB", chunked + fields(5, 1000) + "\r\n", "4 KiB", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k counted
			forEachRawClient(t, answerEach(&k, tc.answer), func(t *testing.T, s *rawServer, cfg Config) {
				r, _ := do(context.Background(), newDriver(t, cfg), 0)
				if r.Class != stats.Protocol {
					t.Errorf("%v %q, want protocol", r.Class, r.Message)
				}
				if ownsH1(cfg.withDefaults()) && !strings.Contains(r.Message, tc.bound) {
					t.Errorf("%q: want the bound, %s, named", r.Message, tc.bound)
				}
			})
		})
	}
}

// TestEndlessTrailersStopAtTheBound: trailers that never end are cut at
// their bound, not read until the timeout.
func TestEndlessTrailersStopAtTheBound(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if !readRequest(br) {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"))
		for {
			if _, err := c.Write([]byte("X-More: " + strings.Repeat("t", 1000) + "\r\n")); err != nil {
				return
			}
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Timeout = 10 * time.Second
		r, took := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class != stats.Protocol || took > cfg.Timeout/2 {
			t.Errorf("%v %q after %v: want protocol, at the bound, not the timeout", r.Class, r.Message, took)
		}
		if ownsH1(cfg.withDefaults()) && r.BytesRecv > 64<<10 {
			t.Errorf("%d bytes read: want no more than the bound asks", r.BytesRecv)
		}
	})
}

// TestWhatAClientMustAccept (rule 7): bare line feeds, obs-fold, one
// Content-Length repeated, chunk sizes with leading zeros, an empty list
// element in Transfer-Encoding: each answer is a success read whole, and
// the connection is kept. net/http refuses two of them (README).
func TestWhatAClientMustAccept(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		nethttp      bool // net/http accepts it
	}{
		{"bare line feeds", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", true},
		{"obs-fold", "HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\nContent-Length: 2\r\n\r\nok", true},
		{"Content-Length twice", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", true},
		{"Content-Length listed twice", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok", false},
		{"chunk size with leading zeros", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0002\r\nok\r\n000\r\n\r\n", true},
		{"chunked, with an empty element", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, \r\n\r\n2\r\nok\r\n0\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k counted
			forEachRawClient(t, answerEach(&k, tc.answer), func(t *testing.T, s *rawServer, cfg Config) {
				if !tc.nethttp && !ownsH1(cfg.withDefaults()) {
					t.Skip("net/http refuses this answer (README, HTTP rules)")
				}
				d := newDriver(t, cfg)
				for i := range 2 {
					if r, _ := do(context.Background(), d, 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 {
						t.Errorf("request %d: %v %q, body %d; want ok, 2", i, r.Class, r.Message, r.Counters[stats.BodyBytes])
					}
				}
				if n := s.conns.Load(); n != 1 {
					t.Errorf("%d connections, want 1", n)
				}
			})
		})
	}
}

// TestWhatAClientMustRefuse (rule 7): a status outside 100–599 and a
// version other than HTTP/1.0 and HTTP/1.1 are protocol failures.
func TestWhatAClientMustRefuse(t *testing.T) {
	for _, answer := range []string{
		"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 600 High\r\nContent-Length: 0\r\n\r\n",
		"HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n",
	} {
		t.Run(answer[:12], func(t *testing.T) {
			var k counted
			forEachRawClient(t, answerEach(&k, answer), func(t *testing.T, s *rawServer, cfg Config) {
				if r, _ := do(context.Background(), newDriver(t, cfg), 0); r.Class != stats.Protocol {
					t.Errorf("%v %q, want protocol", r.Class, r.Message)
				}
			})
		})
	}
}

// TestOneEventOneClass (rule 8): a reset after part of the status line
// is a broken answer (protocol) on every path; a reset before any byte on
// a reused connection sends the request again, once, counted.
func TestOneEventOneClass(t *testing.T) {
	reset := func(c net.Conn) {
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
	}
	t.Run("reset inside the status line", func(t *testing.T) {
		serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
			if readRequest(br) {
				_, _ = c.Write([]byte("HTTP/1.1 20"))
				time.Sleep(5 * time.Millisecond) // the bytes go before the reset, not with it
				reset(c)
			}
		}
		forEachPlainClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
			if r, _ := do(context.Background(), newDriver(t, cfg), 0); r.Class != stats.Protocol {
				t.Errorf("%v %q, want protocol", r.Class, r.Message)
			}
		})
	})
	t.Run("reset before any byte, reused", func(t *testing.T) {
		serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
			if readRequest(br) {
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			}
			if readRequest(br) {
				reset(c)
			}
		}
		forEachPlainClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
			d := newDriver(t, cfg)
			_, _ = do(context.Background(), d, 0)
			r, _ := do(context.Background(), d, 0)
			if r.Class != stats.OK || r.Counters[stats.Retries] != 1 {
				t.Errorf("%v %q, %d retries; want ok after one retry", r.Class, r.Message, r.Counters[stats.Retries])
			}
		})
	})
}

// forEachPlainClient is forEachRawClient without TLS: a reset is the TCP
// connection's.
func forEachPlainClient(t *testing.T, serve func(s *rawServer, c net.Conn, br *bufio.Reader), f func(t *testing.T, s *rawServer, cfg Config)) {
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		if cfg.hasTLS() {
			t.Skip("TLS: the reset is under TLS's records")
		}
		f(t, s, cfg)
	})
}

// TestBytesReceivedAreTheWholeAnswer (rule 10): what is received is the
// whole answer, interim ones too, status line, headers and body: a server
// that sends 20 KiB of headers and 2 bytes of body is seen sending 20 KiB.
func TestBytesReceivedAreTheWholeAnswer(t *testing.T) {
	answer := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 20) +
		"Content-Length: 2\r\n\r\nok"
	var k counted
	forEachPlainClient(t, answerEach(&k, answer), func(t *testing.T, s *rawServer, cfg Config) {
		k.sent.Store(0)
		d := newDriver(t, cfg)
		var recv int64
		for range 3 {
			r, _ := do(context.Background(), d, 0)
			recv += r.BytesRecv
			if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 {
				t.Errorf("%v %q, body %d", r.Class, r.Message, r.Counters[stats.BodyBytes])
			}
		}
		if recv != k.sent.Load() {
			t.Errorf("%d bytes received, the server sent %d", recv, k.sent.Load())
		}
	})
}

// TestALineCutShortIsCounted: bytes of an answer that ended inside its
// status line are bytes received.
func TestALineCutShortIsCounted(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 20")) // and close
		}
	}
	forEachPlainClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		if !ownsH1(cfg.withDefaults()) {
			t.Skip("net/http tells no byte count of an answer it could not read (README)")
		}
		r, _ := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class != stats.Protocol || r.BytesRecv != 11 {
			t.Errorf("%v %q, %d bytes received; want protocol after 11", r.Class, r.Message, r.BytesRecv)
		}
	})
}

// TestNoRetryOnceTheAnswerBegan: a request on a reused connection whose
// answer began and then broke is not sent again: it failed, as a broken
// answer, with its first byte.
func TestNoRetryOnceTheAnswerBegan(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 20"))
			time.Sleep(5 * time.Millisecond) // no signal: the bytes go before the reset, not with it
			_ = c.(*net.TCPConn).SetLinger(0)
			_ = c.Close()
		}
	}
	forEachPlainClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		d := newDriver(t, cfg)
		_, _ = do(context.Background(), d, 0)
		r, _ := do(context.Background(), d, 0)
		if r.Class != stats.Protocol || r.Counters[stats.Retries] != 0 || r.TTFB <= 0 || s.conns.Load() != 1 {
			t.Errorf("%v %q, %d retries, TTFB %v, %d connections; want protocol, no retry", r.Class, r.Message,
				r.Counters[stats.Retries], r.TTFB, s.conns.Load())
		}
	})
}

// TestAFreshConnectionIsNeverRetried: only a reused connection's close
// sends a request again: a new TLS connection the server closes during
// the handshake fails its request, whatever the connection before it did.
func TestAFreshConnectionIsNeverRetried(t *testing.T) {
	var first atomic.Bool
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(okHandler(2))
	srv.Listener.Close()
	srv.Listener = &firstOnly{Listener: ln, first: &first}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := writeCA(t, srv.Certificate().Raw)
	for _, maxConns := range []int{0, 4} {
		first.Store(false)
		d := newDriver(t, Config{URL: srv.URL + "/", Proto: ProtoH1, MaxConns: maxConns, CAFile: ca})
		if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
			t.Fatalf("max_conns %d: first request %v %q", maxConns, r.Class, r.Message)
		}
		srv.CloseClientConnections() // the kept one goes; every later one is closed at its handshake
		// The kept connection's close is found before its reuse (an idle
		// close) or, by net/http's reader not yet, on it (a retry); the
		// fresh connection's failure adds nothing.
		r, _ := do(context.Background(), d, 0)
		if found := r.Counters[stats.IdleCloses] + r.Counters[stats.Retries]; r.Class == stats.OK || found > 1 ||
			maxConns == 0 && found != 1 {
			t.Errorf("max_conns %d: %v %q, counters %v; want a failure, sent once more at most for the kept connection",
				maxConns, r.Class, r.Message, r.Counters)
		}
	}
}

// firstOnly is a listener that serves its first connection and closes
// every later one at once.
type firstOnly struct {
	net.Listener
	first *atomic.Bool
}

func (l *firstOnly) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.first.CompareAndSwap(false, true) {
			return c, err
		}
		_ = c.Close()
	}
}
