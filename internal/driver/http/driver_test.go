package httpdriver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

func TestDoProtocolsSizeAndReuse(t *testing.T) {
	const size, n = 10_000, 100
	for _, tc := range []struct {
		name, mode, proto string
		maxConns          int
		wantMajor         int
	}{
		{"conn-h1", modeH1, ProtoAuto, 0, 1},
		{"conn-tls-h1", modeTLSH2, ProtoH1, 0, 1},
		{"nethttp-h1-pool", modeH1, ProtoH1, 8, 1},
		{"nethttp-tls-auto-h2", modeTLSH2, ProtoAuto, 0, 2},
		{"nethttp-tls-auto-h1", modeTLSH1, ProtoAuto, 0, 1},
		{"nethttp-tls-h2", modeTLSH2, ProtoH2, 0, 2},
		{"nethttp-h2c", modeH2C, ProtoH2C, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var major int
			ts := startServer(t, tc.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				major = r.ProtoMajor
				mu.Unlock()
				okHandler(size).ServeHTTP(w, r)
			}))
			d := newDriver(t, Config{URL: ts.URL + "/data", Proto: tc.proto, CAFile: ts.CAFile, MaxConns: tc.maxConns})
			var connects int
			for i := range n {
				r, took := do(context.Background(), d, 0)
				if r.Class != stats.OK || r.Counters[stats.BodyBytes] != size || r.Op != "GET /data" {
					t.Fatalf("request %d: %+v", i, r)
				}
				if r.TTFB <= 0 || r.TTFB > took {
					t.Fatalf("request %d: TTFB %v not in (0, %v]", i, r.TTFB, took)
				}
				if r.Connect > 0 {
					connects++
					if i != 0 || r.Connect > r.TTFB {
						t.Fatalf("request %d: Connect %v (TTFB %v)", i, r.Connect, r.TTFB)
					}
				}
			}
			if got := ts.conns.Load(); got != 1 || connects != 1 {
				t.Errorf("%d requests opened %d connections, %d reported Connect; want 1 and 1", n, got, connects)
			}
			mu.Lock()
			defer mu.Unlock()
			if major != tc.wantMajor {
				t.Errorf("server saw HTTP/%d, want HTTP/%d", major, tc.wantMajor)
			}
		})
	}
}

func TestDoTTFBIncludesServerWait(t *testing.T) {
	const wait = 50 * time.Millisecond
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(wait)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(wait)
			_, _ = io.WriteString(w, "done")
		}))
		r, took := do(context.Background(), newDriver(t, c.config(ts, "/")), 0)
		if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 4 {
			t.Fatalf("result %+v", r)
		}
		if r.TTFB < wait || r.TTFB > took {
			t.Errorf("TTFB %v, want in [%v, %v]", r.TTFB, wait, took)
		}
		if took < 2*wait {
			t.Errorf("Do took %v, less than the server's %v", took, 2*wait)
		}
	})
}

// seen is what a server saw of a request.
type seen struct {
	method, uri, host, proto string
	header                   http.Header
	body                     []byte
}

func TestDoSendsTheConfiguredRequest(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100_000)
	var reference *seen // what the first client sent; every other must match
	forEachClient(t, func(t *testing.T, c client) {
		got := make(chan seen, 1)
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			h := r.Header.Clone()
			h.Del("Accept-Encoding") // net/http's HTTP/2 adds none, its HTTP/1.1 none either: guard anyway
			got <- seen{r.Method, r.RequestURI, r.Host, r.Proto, h, b}
			_, _ = io.WriteString(w, "stored")
		}))
		cfg := c.config(ts, "/up/a%20b?q=1&r=2")
		cfg.URL = strings.Replace(cfg.URL, "://", "://alice:secret@", 1)
		cfg.Method, cfg.Body = http.MethodPost, body
		cfg.Header = http.Header{"X-Test": {"yes", "twice"}, "Host": {"example.test"}, "Content-Type": {"application/json"}}
		d := newDriver(t, cfg)
		for range 3 { // the body is sent afresh each time
			r, _ := do(context.Background(), d, 7)
			if r.Class != stats.OK || r.BytesSent != int64(len(body)) || r.Counters[stats.BodyBytes] != 6 || r.Op != "POST /up/a%20b" {
				t.Fatalf("result %+v", r)
			}
			s := <-got
			if !bytes.Equal(s.body, body) {
				t.Fatalf("server got %d bytes, want %d", len(s.body), len(body))
			}
			if s.method != "POST" || s.host != "example.test" || s.header.Get("User-Agent") != UserAgent ||
				s.header.Get("Authorization") != "Basic YWxpY2U6c2VjcmV0" { // alice:secret
				t.Fatalf("server saw %+v", s)
			}
			if strings.HasPrefix(s.proto, "HTTP/2") {
				s.uri = "/up/a%20b?q=1&r=2" // an HTTP/2 server rebuilds RequestURI; compare the rest
			}
			s.proto, s.body = "", nil
			s.header.Del("Content-Length") // HTTP/2 may omit it: the frames carry the length
			if reference == nil {
				reference = &s
			} else if !equalSeen(s, *reference) {
				t.Errorf("server saw\n%+v\nwant, as the first client sent,\n%+v", s, *reference)
			}
		}
	})
}

func equalSeen(a, b seen) bool {
	if a.method != b.method || a.uri != b.uri || a.host != b.host || len(a.header) != len(b.header) {
		return false
	}
	for k, v := range a.header {
		if strings.Join(v, "\n") != strings.Join(b.header[k], "\n") {
			return false
		}
	}
	return true
}

func TestDoStatusClasses(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "body")
		}))
		for _, tc := range []struct {
			code   int
			expect string // Config.ExpectStatus
			class  stats.Class
			msg    string
		}{
			{200, "", stats.OK, ""},
			{302, "", stats.OK, ""}, // redirects are not followed
			// a failure's message holds the start of its body
			{404, "", stats.Status4xx, "HTTP 404 Not Found: body"},
			{429, "", stats.RateLimited, "HTTP 429 Too Many Requests: body"},
			{500, "", stats.Status5xx, "HTTP 500 Internal Server Error: body"},
			{503, "", stats.Status5xx, "HTTP 503 Service Unavailable: body"},
			{302, "200-299", stats.StatusOther, "HTTP 302 Found: body (not an expected status: 200-299)"},
			{404, "200-299,404", stats.OK, ""},
		} {
			cfg := c.config(ts, "/"+strconv.Itoa(tc.code))
			cfg.ExpectStatus = tc.expect
			d := newDriver(t, cfg)
			for range 2 { // the second request reuses the connection: the body was drained
				r, _ := do(context.Background(), d, 0)
				if r.Class != tc.class || r.Message != tc.msg || r.Counters[stats.BodyBytes] != 4 {
					t.Errorf("status %d, expecting %q: got %v %q (%d bytes), want %v %q", tc.code, tc.expect, r.Class, r.Message, r.Counters[stats.BodyBytes], tc.class, tc.msg)
				}
			}
		}
		if n := ts.conns.Load(); n != 8 {
			t.Errorf("%d connections for 8 drivers × 2 requests, want 8", n)
		}
	})
}

func TestDoConcurrentVUsOneConnEach(t *testing.T) {
	for _, tc := range []struct {
		name            string
		proto           string
		mode            string
		maxConns, conns int // want at most conns
	}{
		{"conn-h1", ProtoAuto, modeH1, 0, 8},
		{"nethttp-h1-max2", ProtoAuto, modeH1, 2, 2},
		{"nethttp-h2c", ProtoH2C, modeH2C, 0, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.mode, okHandler(100))
			d := newDriver(t, Config{URL: ts.URL, Proto: tc.proto, MaxConns: tc.maxConns})
			var wg sync.WaitGroup
			for vu := range 8 {
				wg.Go(func() {
					var r driver.Result
					for range 50 {
						d.Do(context.Background(), vu, &r)
						if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 100 {
							t.Errorf("vu %d: %+v", vu, r)
							return
						}
					}
				})
			}
			wg.Wait()
			if n := ts.conns.Load(); n < 1 || n > int64(tc.conns) {
				t.Errorf("%d connections, want 1..%d", n, tc.conns)
			}
		})
	}
}

func TestDoSetsEveryField(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, okHandler(3))
		cfg := c.config(ts, "/")
		cfg.Name = "probe"
		d := newDriver(t, cfg)
		for _, vu := range []int{3, -1} { // a negative VU uses the shared net/http client
			r := driver.Result{Op: "stale", Class: stats.TLS, Message: "stale", BytesSent: 9, Connect: time.Hour}
			d.Do(context.Background(), vu, &r)
			if r.Op != "probe" || r.Class != stats.OK || r.Message != "" || r.BytesSent != 0 || r.Counters[stats.BodyBytes] != 3 || r.Connect >= time.Hour {
				t.Errorf("vu %d: result %+v still holds stale fields", vu, r)
			}
		}
	})
}

// TestVUZeroHasItsOwnConnection (issue 18): VU 0 is a VU like any other,
// with a client of its own (unless every VU shares a pool); only a
// negative VU uses the shared one.
func TestVUZeroHasItsOwnConnection(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, okHandler(3))
		cfg := c.config(ts, "/")
		d := newDriver(t, cfg)
		for _, vu := range []int{0, -1, 0, -1} {
			if r, _ := do(context.Background(), d, vu); r.Class != stats.OK {
				t.Fatalf("vu %d: %v %q", vu, r.Class, r.Message)
			}
		}
		want := int64(2)
		if cfg.MaxConns > 0 { // one pool for every VU
			want = 1
		}
		if n := ts.conns.Load(); n != want {
			t.Errorf("VUs 0 and -1 opened %d connections, want %d", n, want)
		}
	})
}

// TestBodyIsSentWithItsLength (issue 18): a request body goes with a
// Content-Length, not chunked, and is counted as sent.
func TestBodyIsSentWithItsLength(t *testing.T) {
	const body = `{"query":"up"}`
	forEachClient(t, func(t *testing.T, c client) {
		var got atomic.Value
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got.Store(fmt.Sprintf("%d %v %s", r.ContentLength, r.TransferEncoding, b))
		}))
		cfg := c.config(ts, "/")
		cfg.Method, cfg.Body = http.MethodPost, []byte(body)
		r, _ := do(context.Background(), newDriver(t, cfg), 0)
		want := fmt.Sprintf("%d [] %s", len(body), body)
		if r.Class != stats.OK || r.BytesSent != int64(len(body)) || got.Load() != want {
			t.Errorf("%v, %d bytes sent; the server read %q, want %q", r.Class, r.BytesSent, got.Load(), want)
		}
	})
}

// TestStatus400IsAFailureWithItsBody (issue 18): 400 is the first status
// that fails a request, with the start of its body in the message; 399 is
// not a failure.
func TestStatus400IsAFailureWithItsBody(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "bad field")
		}))
		for code, want := range map[int]string{399: "", 400: "HTTP 400 Bad Request: bad field"} {
			r, _ := do(context.Background(), newDriver(t, c.config(ts, "/"+strconv.Itoa(code))), 0)
			if r.Message != want || (r.Class == stats.OK) != (code < 400) {
				t.Errorf("status %d: %v %q, want %q", code, r.Class, r.Message, want)
			}
		}
	})
}

// TestEmptyBodyIsOK (issue 18): a response with no body (204) succeeds
// with 0 bytes received, on every client.
func TestEmptyBodyIsOK(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}))
		if r, _ := do(context.Background(), newDriver(t, c.config(ts, "/")), 0); r.Class != stats.OK || r.Counters[stats.BodyBytes] != 0 {
			t.Errorf("204: %v %q, %d bytes", r.Class, r.Message, r.Counters[stats.BodyBytes])
		}
	})
}

// TestOldContextInterruptsNothing (issue 18): once a VU's requests run
// under another context, cancelling the one it used before interrupts
// none of them.
func TestOldContextInterruptsNothing(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, okHandler(3))
		d := newDriver(t, c.config(ts, "/"))
		old, cancel := context.WithCancel(context.Background())
		_, _ = do(old, d, 0)
		_, _ = do(context.Background(), d, 0)
		cancel()
		time.Sleep(20 * time.Millisecond) // what cancel started has run
		if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
			t.Errorf("after the old context's end: %v %q", r.Class, r.Message)
		}
	})
}

// TestCallersTraceStaysTheCallers (issue 18): a request under a context
// that carries the caller's own httptrace calls the caller's hooks for that
// request only, not for the VU's later ones.
func TestCallersTraceStaysTheCallers(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		if c.own {
			return // perflab's own client makes no httptrace calls
		}
		ts := startServer(t, c.mode, okHandler(3))
		d := newDriver(t, c.config(ts, "/"))
		var calls atomic.Int64
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotFirstResponseByte: func() { calls.Add(1) },
		})
		_, _ = do(ctx, d, 0)
		_, _ = do(context.Background(), d, 0)
		_, _ = do(context.Background(), d, 0)
		if n := calls.Load(); n != 1 {
			t.Errorf("the caller's hook ran %d times, want once", n)
		}
	})
}
