package builtin

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestListenLoopbackRefuses(t *testing.T) {
	for _, addr := range []string{
		"0.0.0.0:0", "10.0.0.1:80", ":0", "[::]:0", "192.168.1.10:8080",
		"example.com:80", "[::ffff:10.0.0.1]:80",
	} {
		ln, err := ListenLoopback(addr)
		if err == nil {
			ln.Close()
			t.Errorf("ListenLoopback(%q) succeeded, want refusal", addr)
			continue
		}
		if !errors.Is(err, ErrNotLoopback) {
			t.Errorf("ListenLoopback(%q) = %v, want ErrNotLoopback", addr, err)
		}
	}
	if _, err := ListenLoopback("127.0.0.1"); err == nil || errors.Is(err, ErrNotLoopback) {
		t.Errorf("ListenLoopback without port = %v, want a parse error", err)
	}
}

func TestListenLoopbackAccepts(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := ListenLoopback(addr)
		if err != nil {
			t.Errorf("ListenLoopback(%q): %v", addr, err)
			continue
		}
		if port := ln.Addr().(*net.TCPAddr).Port; port == 0 {
			t.Errorf("ListenLoopback(%q) listens on port 0, want a free port", addr)
		}
		ln.Close()
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true,
		"LocalHost": true, "::ffff:127.0.0.1": true,
		"": false, "0.0.0.0": false, "::": false, "128.0.0.1": false,
		"10.0.0.1": false, "localhost.example.com": false, "::1%eth0": false,
	}
	for host, want := range tests {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func TestServeStopsWhenContextDone(t *testing.T) {
	ln := listen(t)
	url := "http://" + ln.Addr().String() + "/health"
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, NewHTTP(HTTPConfig{}, nil)) }()

	if code, _, _ := get(t, url); code != http.StatusOK {
		t.Fatalf("GET /health = %d, want 200", code)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10s after its context was cancelled")
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Error("listener still accepts connections after Serve returned")
	}
}

// closeSignal reports when Serve has closed its listener, i.e. shutdown
// has begun.
type closeSignal struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeSignal) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func TestServeLetsInFlightRequestsFinish(t *testing.T) {
	ln := &closeSignal{Listener: listen(t), closed: make(chan struct{})}
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()

	<-entered
	cancel()
	<-ln.closed // shutdown has begun while the request is in flight
	close(release)
	if r := <-got; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request got %q, %v; want \"done\"", r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
}

func TestServeReportsListenerFailure(t *testing.T) {
	ln := listen(t)
	ln.Close()
	if err := Serve(t.Context(), ln, http.NotFoundHandler()); err == nil {
		t.Fatal("Serve on a closed listener returned nil, want an error")
	}
}
