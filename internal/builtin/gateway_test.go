package builtin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestGatewayConfigValidate(t *testing.T) {
	if errs := (GatewayConfig{Upstream: "http://127.0.0.1:8080", Delay: time.Millisecond}).Validate(); len(errs) != 0 {
		t.Errorf("valid config: %v", errs)
	}
	// A name that is not a loopback one is refused without a lookup.
	errs := GatewayConfig{Upstream: "http://upstream.invalid:80", Delay: -time.Second}.Validate()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "delay -1s") || !errors.Is(errs[1], ErrNotLoopback) {
		t.Errorf("errors %v", errs)
	}
	for _, up := range []string{"", "127.0.0.1:8080", "https://127.0.0.1:1", "http://%zz"} {
		if errs := (GatewayConfig{Upstream: up}).Validate(); len(errs) != 1 {
			t.Errorf("upstream %q: %v, want one problem", up, errs)
		}
	}
	if _, err := NewGateway(GatewayConfig{}); err == nil || !strings.Contains(err.Error(), "upstream URL is required") {
		t.Errorf("NewGateway without upstream: %v", err)
	}
}

// gatewayServer is a gateway served on a loopback port for a test.
type gatewayServer struct{ URL string }

// startGateway serves a gateway to upstream on a free loopback port until
// the test ends.
func startGateway(t testing.TB, upstream string, delay time.Duration) gatewayServer {
	t.Helper()
	return startGatewayOn(t, upstream, delay, nil)
}

// startGatewayOn is startGateway with the gateway's delay waited on c;
// nil keeps its own clock.
func startGatewayOn(t testing.TB, upstream string, delay time.Duration, c answerClock) gatewayServer {
	t.Helper()
	g, err := NewGateway(GatewayConfig{Upstream: upstream, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		g.clock = c
	}
	ln, err := ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("gateway: %v", err)
		}
		g.Close()
	})
	return gatewayServer{URL: "http://" + ln.Addr().String()}
}

// The gateway forwards a request after its delay: it waits for the
// deadline (on a fake clock, so the test checks the deadline, not the
// machine's timekeeping), and its duration metric, on the same clock,
// holds the delay.
func TestGatewayForwards(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(b))
	}))
	defer up.Close()
	fake := newFakeAnswers(true)
	gw := startGatewayOn(t, up.URL+"/base", 3*time.Millisecond, fake)
	resp, err := http.Post(gw.URL+"/v1/x?q=1", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(b) != "POST /base/v1/x?q=1 hello" {
		t.Errorf("answer %d %q", resp.StatusCode, b)
	}
	if got := fake.deadlines(); !slices.Equal(got, []time.Duration{3 * time.Millisecond}) {
		t.Errorf("waited until %v, want the 3ms delay", got)
	}
	if code, body, _ := get(t, gw.URL+"/health"); code != 200 || string(body) != "OK" {
		t.Errorf("/health: %d %q", code, body)
	}
	_, metrics, _ := get(t, gw.URL+"/metrics")
	for _, want := range []string{`perflab_gateway_requests_total{code="418"} 1`, "perflab_gateway_request_duration_seconds_count 1",
		"perflab_gateway_request_duration_seconds_sum 0.003", "perflab_gateway_upstream_errors_total 0", "go_goroutines",
		"process_resident_memory_bytes"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// A streamed answer comes through as it is written, not when it ends: the
// client reads the first event while the upstream still holds back the
// rest until the client has it.
func TestGatewayStreams(t *testing.T) {
	release, finished := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(finished)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(20 * time.Second): // only a bound: a buffering gateway is seen below
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	br := bufio.NewReader(resp.Body)
	go func() {
		line, _ := br.ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if line != "data: first\n" {
			t.Errorf("first line %q", line)
		}
	case <-finished:
		t.Fatal("the upstream finished before the client read its first event: the gateway buffered the stream")
	}
	close(release)
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), "data: [DONE]") {
		t.Errorf("rest of the stream %q", rest)
	}
}

func TestGatewayUpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	addr := up.URL
	up.Close()
	gw := startGateway(t, addr, 0)
	if code, body, _ := get(t, gw.URL+"/"); code != http.StatusBadGateway || !strings.Contains(string(body), "cannot reach the upstream") {
		t.Errorf("answer %d %q", code, body)
	}
	if _, metrics, _ := get(t, gw.URL+"/metrics"); !strings.Contains(string(metrics), "perflab_gateway_upstream_errors_total 1") ||
		!strings.Contains(string(metrics), `perflab_gateway_requests_total{code="502"} 1`) {
		t.Errorf("/metrics:\n%s", metrics)
	}
}

// The gateway forwards end-to-end headers, not hop-by-hop ones, names the
// upstream in Host, and keeps its connection to the upstream open across
// requests even when a client closes its own.
func TestGatewayHeaders(t *testing.T) {
	var conns sync.Map
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Store(r.RemoteAddr, true)
		w.Header().Set("X-Seen", r.Host+" "+r.Header.Get("X-Custom")+" ["+r.Header.Get("Keep-Alive")+r.Header.Get("Upgrade")+"]")
		w.Header().Set("Keep-Alive", "timeout=5")
	}))
	up.Start()
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+"/", nil)
		req.Header.Set("X-Custom", "kept")
		req.Header.Set("Keep-Alive", "timeout=1")
		req.Header.Set("Upgrade", "websocket")
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := strings.TrimPrefix(up.URL, "http://") + " kept []"; resp.Header.Get("X-Seen") != want || resp.Header.Get("Keep-Alive") != "" {
			t.Fatalf("upstream saw %q, want %q; answer's Keep-Alive %q", resp.Header.Get("X-Seen"), want, resp.Header.Get("Keep-Alive"))
		}
	}
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("the gateway used %d connections to the upstream for 3 requests, want 1", n)
	}
}
