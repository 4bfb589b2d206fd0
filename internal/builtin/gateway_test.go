package builtin

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// startGateway serves a gateway to upstream on a test server.
func startGateway(t *testing.T, upstream string, delay time.Duration) *httptest.Server {
	t.Helper()
	g, err := NewGateway(GatewayConfig{Upstream: upstream, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(func() { srv.Close(); g.Close() })
	return srv
}

func TestGatewayForwards(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(b))
	}))
	defer up.Close()
	gw := startGateway(t, up.URL+"/base", 3*time.Millisecond)
	start := time.Now()
	resp, err := http.Post(gw.URL+"/v1/x?q=1", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusTeapot || string(b) != "POST /base/v1/x?q=1 hello" || took < 3*time.Millisecond {
		t.Errorf("answer %d %q after %v", resp.StatusCode, b, took)
	}
	if code, body, _ := get(t, gw.URL+"/health"); code != 200 || string(body) != "OK" {
		t.Errorf("/health: %d %q", code, body)
	}
	_, metrics, _ := get(t, gw.URL+"/metrics")
	for _, want := range []string{`perflab_gateway_requests_total{code="418"} 1`, "perflab_gateway_request_duration_seconds_count 1",
		"perflab_gateway_upstream_errors_total 0", "go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// A streamed answer comes through as it is written, not when it ends.
func TestGatewayStreams(t *testing.T) {
	up := httptest.NewServer(NewLLM(LLMConfig{Tokens: 3, TokensPerSecond: 10}, nil))
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	_, events := streamFrom(t, gw.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if len(events) < 4 || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("events %v", events)
	}
	if first, last := events[0].at, events[len(events)-1].at; last-first < 150*time.Millisecond {
		t.Errorf("first event at %v, last at %v: the stream was buffered", first, last)
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
