package builtin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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
	if rest, err := io.ReadAll(br); err != nil || !strings.Contains(string(rest), "data: [DONE]") {
		t.Errorf("rest of the stream %q, %v", rest, err)
	}
}

// An upstream that cannot be reached is answered 502. Its port is held
// until the gateway has its own, which therefore cannot be the same: a
// gateway that forwarded to itself would loop until it ran out of files.
func TestGatewayUpstreamDown(t *testing.T) {
	held, err := ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := startGateway(t, "http://"+held.Addr().String(), 0)
	held.Close()
	if code, body, _ := get(t, gw.URL+"/"); code != http.StatusBadGateway || !strings.Contains(string(body), "cannot reach the upstream") {
		t.Errorf("answer %d %q", code, body)
	}
	if _, metrics, _ := get(t, gw.URL+"/metrics"); !strings.Contains(string(metrics), "perflab_gateway_upstream_errors_total 1") ||
		!strings.Contains(string(metrics), `perflab_gateway_requests_total{code="502"} 1`) {
		t.Errorf("/metrics:\n%s", metrics)
	}
}

// The gateway forwards end-to-end headers, not hop-by-hop ones (the
// standard ones and those a Connection header names), names the upstream
// in Host, and keeps its connection to the upstream open across requests
// even when a client closes its own.
func TestGatewayHeaders(t *testing.T) {
	var conns sync.Map
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Store(r.RemoteAddr, true)
		w.Header().Set("X-Seen", r.Host+" "+r.Header.Get("X-Custom")+" ["+r.Header.Get("Keep-Alive")+r.Header.Get("Upgrade")+
			r.Header.Get("X-Hop")+"]")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Connection", "X-Up-Hop")
		w.Header().Set("X-Up-Hop", "not for the client")
	}))
	up.Start()
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+"/", nil)
		req.Header.Set("X-Custom", "kept")
		req.Header.Set("Keep-Alive", "timeout=1")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Connection", "x-hop")
		req.Header.Set("X-Hop", "not for the upstream")
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := strings.TrimPrefix(up.URL, "http://") + " kept []"; resp.Header.Get("X-Seen") != want ||
			resp.Header.Get("Keep-Alive")+resp.Header.Get("X-Up-Hop") != "" {
			t.Fatalf("upstream saw %q, want %q; answer's Keep-Alive %q, X-Up-Hop %q", resp.Header.Get("X-Seen"), want,
				resp.Header.Get("Keep-Alive"), resp.Header.Get("X-Up-Hop"))
		}
	}
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("the gateway used %d connections to the upstream for 3 requests, want 1", n)
	}
}

// An upstream that fails midway through a stream breaks the client's
// answer too, rather than letting it end as if it were whole, and counts
// as an upstream error.
func TestGatewayUpstreamFailsMidway(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection closes mid-stream
	}))
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	resp, err := http.Get(gw.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(b) != "data: first\n\n" {
		t.Errorf("the client read %q and %v, want the first event and an error", b, err)
	}
	if _, metrics, _ := get(t, gw.URL+"/metrics"); !strings.Contains(string(metrics), "perflab_gateway_upstream_errors_total 1") {
		t.Errorf("/metrics:\n%s", metrics)
	}
}

// Bodies pass through the gateway as they come, both ways and whatever
// their framing: the upstream reads the start of a request body while the
// client still holds back the rest, and the client reads the start of an
// answer of known length while the upstream still holds back the rest.
func TestGatewayStreamsBodies(t *testing.T) {
	upGot, clientGot := make(chan struct{}), make(chan struct{})
	requestHeld, answerHeld := make(chan bool, 1), make(chan bool, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := make([]byte, len("first "))
		if _, err := io.ReadFull(r.Body, first); err != nil || string(first) != "first " {
			t.Errorf("upstream read %q, %v", first, err)
			answerHeld <- false
			return
		}
		close(upGot)
		rest, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(rest)))
		_, _ = w.Write(first)
		w.(http.Flusher).Flush()
		answerHeld <- !waitOrBound(clientGot)
		_, _ = w.Write(rest)
	}))
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	body, send := io.Pipe()
	go func() {
		_, _ = io.WriteString(send, "first ")
		requestHeld <- !waitOrBound(upGot)
		_, _ = io.WriteString(send, "rest")
		send.Close()
	}()
	resp, err := http.Post(gw.URL+"/", "text/plain", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if <-requestHeld {
		t.Error("the upstream did not get the start of the request before the client sent the rest: the gateway buffered the request")
	}
	first := make([]byte, len("first "))
	_, err = io.ReadFull(resp.Body, first)
	close(clientGot)
	rest, _ := io.ReadAll(resp.Body)
	if <-answerHeld {
		t.Error("the client did not get the start of the answer before the upstream sent the rest: the gateway buffered the answer")
	}
	if err != nil || string(first)+string(rest) != "first rest" || resp.ContentLength != 10 {
		t.Errorf("answer %q%q (length %d), %v", first, rest, resp.ContentLength, err)
	}
}

// The answer may begin before the request's body has all come (full
// duplex): the upstream answers with a first event, then reads the body,
// which the client sends the rest of only once it has that event.
func TestGatewayFullDuplex(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		b, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, "data: "+string(b)+"\n\n")
	}))
	defer up.Close()
	gw := startGateway(t, up.URL, 0)
	body, send := io.Pipe()
	clientGot, held := make(chan struct{}), make(chan bool, 1)
	go func() {
		_, _ = io.WriteString(send, "hello ")
		held <- !waitOrBound(clientGot)
		_, _ = io.WriteString(send, "world")
		send.Close()
	}()
	resp, err := http.Post(gw.URL+"/", "text/plain", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	close(clientGot)
	rest, err := io.ReadAll(br)
	if <-held {
		t.Error("the client did not get the first event before it sent the rest of the request")
	}
	if first != "data: first\n" || string(rest) != "\ndata: hello world\n\n" || err != nil {
		t.Errorf("answer %q%q, %v", first, rest, err)
	}
}

// waitOrBound waits for c to close and reports whether it did within
// 20 s: only a bound, so that a gateway that buffers fails the test that
// calls it instead of hanging it.
func waitOrBound(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

// HoldFirst holds the first piece of an answer, once, and passes the
// rest on whole: the client gets every event, after one wait of the
// hold.
func TestGatewayHoldsTheFirstPiece(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{"data: a\n\n", "data: b\n\n", "data: [DONE]\n\n"} {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	g, err := NewGateway(GatewayConfig{Upstream: up.URL, HoldFirst: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fake := newFakeAnswers(false)
	g.clock = fake
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"stream":true}`)))
	if rec.Body.String() != "data: a\n\ndata: b\n\ndata: [DONE]\n\n" {
		t.Errorf("relayed %q", rec.Body.String())
	}
	if got := fake.deadlines(); !slices.Equal(got, []time.Duration{30 * time.Millisecond}) {
		t.Errorf("waited until %v, want once, 30ms", got)
	}
	if errs := (GatewayConfig{Upstream: up.URL, HoldFirst: -time.Millisecond}).Validate(); len(errs) != 1 {
		t.Errorf("a negative hold: %v", errs)
	}
}
