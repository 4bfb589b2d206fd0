package httpdriver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// blockingServer answers only when the request's context ends (the client
// went away) or the test ends; started receives once per request.
func blockingServer(t *testing.T, mode string) (ts *testServer, started chan struct{}) {
	release := make(chan struct{})
	started = make(chan struct{}, 16)
	ts = startServer(t, mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before ts.Close
	return ts, started
}

func TestDoTimeout(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts, _ := blockingServer(t, c.mode)
		cfg := c.config(ts, "/")
		cfg.Timeout = 50 * time.Millisecond
		r, took := do(context.Background(), newDriver(t, cfg), 0)
		if r.Class != stats.Timeout || r.Message != "request timed out after 50ms" || took < cfg.Timeout {
			t.Errorf("got %v %q after %v, want timeout", r.Class, r.Message, took)
		}
	})
}

func TestDoInterruptedByParent(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts, started := blockingServer(t, c.mode)
		cfg := c.config(ts, "/")
		cfg.Timeout = time.Minute
		d := newDriver(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-started // the request is in flight
			cancel()
		}()
		r, took := do(ctx, d, 0)
		if r.Class != stats.Interrupted || took > 30*time.Second {
			t.Errorf("got %v %q after %v, want interrupted at once", r.Class, r.Message, took)
		}
		// Already done before Do: interrupted too, without a request.
		if r, _ = do(ctx, d, 0); r.Class != stats.Interrupted {
			t.Errorf("done ctx: got %v %q, want interrupted", r.Class, r.Message)
		}
	})
}

func TestDoConnectRefused(t *testing.T) {
	for _, c := range []struct {
		proto string
		loop  bool
	}{{ProtoAuto, false}, {ProtoH2C, false}, {ProtoAuto, true}} { // perflab's goroutine path, net/http, the loop
		proto := c.proto
		port := strconv.Itoa(testutil.FreePort(t)) // nothing listens there any more
		d := newDriver(t, Config{URL: "http://127.0.0.1:" + port + "/", Proto: proto, viaLoop: c.loop})
		r, _ := do(context.Background(), d, 0)
		want := "dial tcp 127.0.0.1:" + port + ": connect: connection refused"
		if r.Class != stats.Connect || r.Message != want {
			t.Errorf("%s: got %v %q, want connect %q", proto, r.Class, r.Message, want)
		}
	}
}

func TestDoTLSErrors(t *testing.T) {
	h2 := startServer(t, modeTLSH2, okHandler(1))
	h1 := startServer(t, modeTLSH1, okHandler(1))
	localhost := strings.Replace(h2.URL, "127.0.0.1", "localhost", 1) // not in the certificate
	for _, tc := range []struct {
		name string
		c    Config
		want stats.Class
	}{
		{"unknown CA", Config{URL: h2.URL}, stats.TLS},
		{"unknown CA, h1", Config{URL: h2.URL, Proto: ProtoH1}, stats.TLS},
		{"skip verify", Config{URL: h2.URL, InsecureSkipVerify: true}, stats.OK},
		{"skip verify, h1", Config{URL: h2.URL, Proto: ProtoH1, InsecureSkipVerify: true}, stats.OK},
		{"h2 against http/1.1-only server", Config{URL: h1.URL, Proto: ProtoH2, CAFile: h1.CAFile}, stats.TLS},
		{"wrong host name", Config{URL: localhost, CAFile: h2.CAFile}, stats.TLS},
		{"plain HTTP to a TLS port", Config{URL: strings.Replace(h2.URL, "https:", "http:", 1)}, stats.Status4xx},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := do(context.Background(), newDriver(t, tc.c), 0)
			if r.Class != tc.want {
				t.Errorf("got %v %q, want %v", r.Class, r.Message, tc.want)
			}
		})
	}
}

func TestDoBodyCutShortIsProtocol(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = io.WriteString(w, "only ten b")
			w.(http.Flusher).Flush()
			if r.ProtoMajor == 2 {
				panic(http.ErrAbortHandler) // resets the stream
			}
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}))
		r, _ := do(context.Background(), newDriver(t, c.config(ts, "/")), 0)
		// At most the 10 bytes sent come before the error.
		if r.Class != stats.Protocol || r.Counters[stats.BodyBytes] > 10 || r.TTFB <= 0 {
			t.Errorf("got %+v, want protocol after the first byte", r)
		}
	})
}

// TestDoSlowLookupTimesOut: a name whose lookup does not answer is the
// request's timeout, on time; on the loop it holds back no other VU (the
// lookup runs off the loop). The resolver is the test's own: no packet
// leaves the machine.
func TestDoSlowLookupTimesOut(t *testing.T) {
	old := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, errors.New("the test's resolver does not answer")
	}}
	defer func() { net.DefaultResolver = old }()
	const timeout = 200 * time.Millisecond
	for _, via := range []bool{false, true} {
		d := newDriver(t, Config{URL: "http://perflab-test.invalid:8080/", Timeout: timeout, viaLoop: via})
		r, took := do(context.Background(), d, 0)
		if r.Class != stats.Timeout || took > timeout+time.Second {
			t.Errorf("loop %v: %v %q after %v, want a timeout after %v", via, r.Class, r.Message, took, timeout)
		}
	}
}
