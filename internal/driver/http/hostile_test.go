package httpdriver

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// Hostile servers: raw TCP (or TLS) on 127.0.0.1, writing what they like,
// for what an httptest handler cannot do: lie about the body, leave it
// unfinished, write a second answer into the first.

// rawServer runs serve on every connection it accepts; it counts them and
// closes them, and waits for serve to return, when the test ends.
type rawServer struct {
	URL    string
	CAFile string // TLS only
	conns  atomic.Int64
	done   chan struct{} // closed when the test ends
}

func startRaw(t *testing.T, useTLS bool, serve func(s *rawServer, c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{URL: "http://" + ln.Addr().String(), done: make(chan struct{})}
	if useTLS {
		cert := httptest.NewUnstartedServer(nil) // only for its certificate
		cert.StartTLS()
		conf := cert.TLS.Clone()
		conf.NextProtos = []string{"http/1.1"}
		s.CAFile = writeCA(t, cert.Certificate().Raw)
		cert.Close()
		ln = tls.NewListener(ln, conf)
		s.URL = "https://" + ln.Addr().String()
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		open  []net.Conn
		ended bool
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if ended {
				mu.Unlock()
				c.Close()
				return
			}
			open = append(open, c)
			mu.Unlock()
			s.conns.Add(1)
			wg.Go(func() {
				defer c.Close()
				serve(s, c, bufio.NewReader(c))
			})
		}
	})
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		mu.Lock()
		ended = true
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

// readRequest reads one request and its body; false when the client went.
func readRequest(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err == nil
}

// sleep waits d, or less if the test ends; false then.
func (s *rawServer) sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-s.done:
		return false
	}
}

// rawClient is a client path over HTTP/1.1, with a raw server to talk to.
type rawClient struct {
	name     string
	tls      bool
	proto    string
	maxConns int
	own      bool
}

// rawClients are the client paths that speak HTTP/1.1: perflab's own, and
// net/http both per VU (TLS with ALPN) and with a shared pool.
var rawClients = []rawClient{
	{"conn-h1", false, ProtoAuto, 0, true},
	{"conn-tls-h1", true, ProtoH1, 0, true},
	{"nethttp-h1-pool", false, ProtoAuto, 64, false},
	{"nethttp-tls-h1", true, ProtoAuto, 0, false},
	{"loop-h1", false, ProtoAuto, 0, true},
}

func forEachRawClient(t *testing.T, serve func(s *rawServer, c net.Conn, br *bufio.Reader), f func(t *testing.T, s *rawServer, cfg Config)) {
	for _, rc := range rawClients {
		t.Run(rc.name, func(t *testing.T) {
			s := startRaw(t, rc.tls, serve)
			cfg := Config{URL: s.URL + "/", Proto: rc.proto, MaxConns: rc.maxConns, CAFile: s.CAFile, viaLoop: strings.HasPrefix(rc.name, "loop")}
			if ownsH1(cfg.withDefaults()) != rc.own {
				t.Fatalf("client %s does not take the path it names", rc.name)
			}
			f(t, s, cfg)
		})
	}
}

// TestDoUnfinishedBodyClosesConnection: a 503 whose chunked body never
// ends, then, after the client's timeout, a "200 OK" written into that
// body. A connection whose response was not read to its end must not be
// reused, or the stale bytes answer the next request.
func TestDoUnfinishedBodyClosesConnection(t *testing.T) {
	t.Parallel()
	const timeout, staleAfter = 300 * time.Millisecond, 500 * time.Millisecond
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nbusy.\r\n"))
			if !s.sleep(staleAfter) {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Timeout = timeout
		d := newDriver(t, cfg)
		const n = 2
		for i := range n {
			r, took := do(context.Background(), d, 0)
			if r.Class != stats.Timeout || took > timeout+time.Second {
				t.Errorf("request %d: got %v %q after %v, want a timeout", i, r.Class, r.Message, took)
			}
		}
		if got := s.conns.Load(); got != n {
			t.Errorf("%d requests cut short used %d connections, want %d (none reused)", n, got, n)
		}
	})
}

// TestDoEndlessBodyClosesConnection: a body that never ends. The next
// request must not read the rest of it as its response ("cannot find
// whitespace in the first line of response").
func TestDoEndlessBodyClosesConnection(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	chunk := "10000\r\n" + strings.Repeat("x", 0x10000) + "\r\n"
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if !readRequest(br) {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
		for s.sleep(10 * time.Millisecond) {
			if _, err := c.Write([]byte(chunk)); err != nil {
				return
			}
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		cfg.Timeout = timeout
		d := newDriver(t, cfg)
		for i := range 2 {
			r, took := do(context.Background(), d, 0)
			if r.Class != stats.Timeout || r.Counters[stats.BodyBytes] == 0 || took > timeout+time.Second {
				t.Errorf("request %d: got %v %q (%d bytes) after %v, want a timeout after some body",
					i, r.Class, r.Message, r.Counters[stats.BodyBytes], took)
			}
		}
		if got := s.conns.Load(); got != 2 {
			t.Errorf("2 requests cut short used %d connections, want 2", got)
		}
	})
}

// TestDoUnfinishedBodyH2C: over HTTP/2 an abandoned stream is reset and
// the connection stays; what the server writes late into it must not
// answer the next request.
func TestDoUnfinishedBodyH2C(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := startServer(t, modeH2C, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("busy."))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(2 * timeout):
			_, _ = w.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}
	}))
	cfg := Config{URL: ts.URL + "/", Proto: ProtoH2C, Timeout: timeout}
	d := newDriver(t, cfg)
	for i := range 2 {
		r, took := do(context.Background(), d, 0)
		if r.Class != stats.Timeout || took > timeout+time.Second {
			t.Errorf("request %d: got %v %q after %v, want a timeout", i, r.Class, r.Message, took)
		}
	}
}

// lyingBody announces size bytes, sends 10, then closes the connection
// (hangUp) or goes silent.
func lyingBody(size string, hangUp bool) func(s *rawServer, c net.Conn, br *bufio.Reader) {
	return func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + size + "\r\n\r\nonly ten b"))
			if hangUp || !s.sleep(time.Minute) {
				return
			}
		}
	}
}

// measure runs one Do on VU 0 and returns its Result, how long it took and
// how many bytes were allocated meanwhile (by the whole process: the test
// runs nothing else, and its servers allocate little).
func measure(d *Driver) (r driver.Result, took time.Duration, allocated uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, took = do(context.Background(), d, 0)
	runtime.ReadMemStats(&after)
	return r, took, after.TotalAlloc - before.TotalAlloc
}

// TestDoMemoryIgnoresAnnouncedLength: a Content-Length of 256 MiB with 10
// bytes behind it must cost the client no more than its bounded buffers,
// and the timeout bounds the whole exchange, body included.
func TestDoMemoryIgnoresAnnouncedLength(t *testing.T) {
	const timeout, announced, limit = 300 * time.Millisecond, 256 << 20, 8 << 20
	for _, tc := range []struct {
		name   string
		hangUp bool
		class  stats.Class
	}{{"hang-up", true, stats.Protocol}, {"silent", false, stats.Timeout}} {
		t.Run(tc.name, func(t *testing.T) {
			forEachRawClient(t, lyingBody("268435456", tc.hangUp), func(t *testing.T, _ *rawServer, cfg Config) {
				cfg.Timeout = timeout
				d := newDriver(t, cfg)
				for i := range 2 {
					r, took, bytes := measure(d)
					if r.Class != tc.class || r.Counters[stats.BodyBytes] != 10 || took > timeout+time.Second {
						t.Errorf("request %d: got %v %q (%d bytes) after %v, want %v after 10 bytes within %v",
							i, r.Class, r.Message, r.Counters[stats.BodyBytes], took, tc.class, timeout+time.Second)
					}
					if bytes > limit {
						t.Errorf("request %d: allocated %d MiB for a body announced as %d MiB, want under %d MiB",
							i, bytes>>20, announced>>20, limit>>20)
					}
				}
			})
		})
	}
}

// TestDoMemoryIgnoresAnnouncedLengthH2C is the same over h2c: a stream
// announcing 256 MiB that sends 10 bytes and goes silent.
func TestDoMemoryIgnoresAnnouncedLengthH2C(t *testing.T) {
	const timeout, limit = 300 * time.Millisecond, 8 << 20
	ts := startServer(t, modeH2C, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "268435456")
		_, _ = w.Write([]byte("only ten b"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	d := newDriver(t, Config{URL: ts.URL + "/", Proto: ProtoH2C, Timeout: timeout})
	r, took, bytes := measure(d)
	if r.Class != stats.Timeout || r.Counters[stats.BodyBytes] != 10 || took > timeout+time.Second || bytes > limit {
		t.Errorf("got %v %q (%d bytes) after %v, %d bytes allocated; want a timeout after 10 bytes within %v, under %d MiB",
			r.Class, r.Message, r.Counters[stats.BodyBytes], took, bytes, timeout+time.Second, limit>>20)
	}
}

// TestIdleCloseIsRetried (issue 18): a server that closes a keep-alive
// connection while it is idle fails no request: the one sent on it before
// the client noticed is tried once more, on a new connection.
func TestIdleCloseIsRetried(t *testing.T) {
	closed := make(chan struct{}, 16)
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		defer closeAndSay(c, closed) // and close it, without saying so
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		drain(closed) // what the last client's server said
		d := newDriver(t, cfg)
		for i := range 3 {
			if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
				t.Errorf("request %d: %v %q", i, r.Class, r.Message)
			}
			<-closed // the connection is closed before the next request
		}
		if n := s.conns.Load(); n != 3 {
			t.Errorf("%d connections, want 3", n)
		}
	})
}

// TestNoByteNoTTFB (issue 18): a server that closes the connection without
// a byte of answer fails the request with no time to first byte.
func TestNoByteNoTTFB(t *testing.T) {
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		readRequest(br) // and close it
	}
	forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
		r, _ := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class == stats.OK || r.TTFB != 0 {
			t.Errorf("%v %q, TTFB %v; want a failure and no TTFB", r.Class, r.Message, r.TTFB)
		}
	})
}

// TestIdleCloseFailsNoRequest (issue 27): a server that closes a
// kept-alive connection while it is idle fails no request, whatever its
// method: the client finds the close before it reuses the connection
// (counted as an idle close), or, when the close comes after it looked,
// sends the request once more on a new connection (counted as a retry).
// Here the request follows the close at once; net/http, whose reader
// finds the close on a goroutine of its own, may still be about to, and
// then fails a POST (README); TestIdleTimeoutAtARate holds it to a real
// server's idle timeout.
func TestIdleCloseFailsNoRequest(t *testing.T) {
	closed, idle := make(chan struct{}, 16), make(chan struct{}, 16)
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		defer closeAndSay(c, closed)
		if readRequest(br) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
		select { // close it once the answer was read: idle, as the client sees it
		case <-idle:
		case <-s.done:
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		forEachRawClient(t, serve, func(t *testing.T, s *rawServer, cfg Config) {
			if !ownsH1(cfg.withDefaults()) {
				t.Skip("net/http: see TestIdleTimeoutAtARate")
			}
			drain(closed) // what the last client's server said
			drain(idle)   // and was told
			cfg.Method, cfg.Body = method, []byte("{}")
			d := newDriver(t, cfg)
			_, _ = do(context.Background(), d, 0)
			idle <- struct{}{}
			<-closed // the connection is closed before the next request
			r, _ := do(context.Background(), d, 0)
			idle <- struct{}{}
			if r.Class != stats.OK {
				t.Errorf("%s: %v %q", method, r.Class, r.Message)
			}
			if found := r.Counters[stats.IdleCloses] + r.Counters[stats.Retries]; found != 1 {
				t.Errorf("%s: counters %v: want the idle close counted once, as an idle close or a retry", method, r.Counters)
			}
		})
	}
}

// closeAndSay closes a raw server's connection and then says so on closed,
// for a test to send its next request only once the close is on its way.
func closeAndSay(c net.Conn, closed chan<- struct{}) {
	_ = c.Close()
	closed <- struct{}{}
}

// drain empties ch.
func drain(ch chan struct{}) {
	for len(ch) > 0 {
		<-ch
	}
}
