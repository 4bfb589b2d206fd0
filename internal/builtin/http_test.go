package builtin

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock for placing requests in stall windows.
type fakeClock struct {
	base   time.Time
	offset atomic.Int64 // nanoseconds after base
}

func newFakeClock() *fakeClock {
	return &fakeClock{base: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time            { return c.base.Add(time.Duration(c.offset.Load())) }
func (c *fakeClock) Set(elapsed time.Duration) { c.offset.Store(int64(elapsed)) }

func startTarget(t *testing.T, cfg HTTPConfig, now func() time.Time) *httptest.Server {
	t.Helper()
	if errs := cfg.Validate(); errs != nil {
		t.Fatalf("test config invalid: %v", errs)
	}
	srv := httptest.NewServer(NewHTTP(cfg, now))
	t.Cleanup(srv.Close)
	return srv
}

// get fetches url and returns the status code and body.
func get(t *testing.T, url string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, body, resp.Header
}

func TestBodySizeExact(t *testing.T) {
	for _, size := range []int64{0, 1, 1024, 3*maxChunk + 123} {
		t.Run(strconv.FormatInt(size, 10), func(t *testing.T) {
			srv := startTarget(t, HTTPConfig{Size: size}, nil)
			code, body, hdr := get(t, srv.URL+"/some/path?q=1")
			if code != http.StatusOK {
				t.Fatalf("status = %d, want 200", code)
			}
			if int64(len(body)) != size {
				t.Errorf("body is %d bytes, want %d", len(body), size)
			}
			if cl := hdr.Get("Content-Length"); cl != strconv.FormatInt(size, 10) {
				t.Errorf("Content-Length = %q, want %d", cl, size)
			}
		})
	}
}

func TestBodyIsDrained(t *testing.T) {
	srv := startTarget(t, HTTPConfig{Size: 10}, nil)
	payload := strings.Repeat("x", 1<<20)
	resp, err := http.Post(srv.URL+"/upload", "text/plain", strings.NewReader(payload))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
}

func TestErrorRate(t *testing.T) {
	const n, rate = 2000, 0.3
	srv := startTarget(t, HTTPConfig{ErrorRate: rate, Size: 16, Seed: 42}, nil)
	failed := 0
	for range n {
		code, body, _ := get(t, srv.URL+"/")
		switch code {
		case http.StatusOK:
		case http.StatusInternalServerError:
			failed++
			if string(body) != errorBody {
				t.Fatalf("500 body = %q, want %q", body, errorBody)
			}
		default:
			t.Fatalf("status = %d, want 200 or 500", code)
		}
	}
	// Binomial(n, rate): allow five standard deviations (≈ ±102 of 600).
	sd := math.Sqrt(n * rate * (1 - rate))
	within(t, "500 responses", float64(failed), n*rate, 5*sd)
}

// A request that arrives in a stall window is held to the window's end:
// the target waits for that deadline (on a fake clock, so the test checks
// the deadline, not the machine's timekeeping), and not for a whole period,
// which a wrong window calculation would give.
func TestStallHoldsUntilWindowEnd(t *testing.T) {
	const stallFor, every = 150 * time.Millisecond, 10 * time.Second
	tests := []struct {
		name    string
		elapsed time.Duration // fake time since the handler was created
		hold    time.Duration
	}{
		{"window opens", every - stallFor, stallFor},
		{"middle of second window", 2*every - 100*time.Millisecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			h := NewHTTP(HTTPConfig{StallFor: stallFor, StallEvery: every}, clock.Now)
			answers := newFakeAnswers(false)
			h.clock = answers
			clock.Set(tt.elapsed)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if got := answers.deadlines(); len(got) != 1 || got[0] != tt.hold {
				t.Errorf("waited for %v, want until %v", got, tt.hold)
			}
		})
	}
}

func TestClientGoneReturnsEarly(t *testing.T) {
	h := NewHTTP(HTTPConfig{Latency: time.Hour}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handler still waiting 10s after its client went away")
	}
	if rec.Body.Len() != 0 {
		t.Errorf("handler wrote %d body bytes to a client that left", rec.Body.Len())
	}
	metrics := scrape(t, h)
	assertLines(t, metrics,
		"perflab_target_canceled_requests_total 1",
		"perflab_target_in_flight_requests 0",
		`perflab_target_requests_total{code="200"} 0`,
	)
}

func TestHealth(t *testing.T) {
	h := NewHTTP(HTTPConfig{Latency: time.Hour, ErrorRate: 1}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	code, body, _ := get(t, srv.URL+"/health")
	if code != http.StatusOK || string(body) != "OK" {
		t.Fatalf("/health = %d %q, want 200 \"OK\"", code, body)
	}
	assertLines(t, scrape(t, h), `perflab_target_requests_total{code="500"} 0`)
}

func TestMetricsCountRequests(t *testing.T) {
	const n, size = 40, 100
	h := NewHTTP(HTTPConfig{Size: size, ErrorRate: 0.5, Seed: 7}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	codes := map[int]int{}
	for range n {
		code, _, _ := get(t, srv.URL+"/load")
		codes[code]++
	}
	if codes[200] == 0 || codes[500] == 0 {
		t.Fatalf("want both outcomes from seed 7, got %v", codes)
	}
	get(t, srv.URL+"/health") // neither /health nor /metrics is counted
	get(t, srv.URL+"/metrics")
	_, body, _ := get(t, srv.URL+"/metrics")
	assertLines(t, string(body),
		fmt.Sprintf(`perflab_target_requests_total{code="200"} %d`, codes[200]),
		fmt.Sprintf(`perflab_target_requests_total{code="500"} %d`, codes[500]),
		fmt.Sprintf("perflab_target_response_bytes_total %d", codes[200]*size+codes[500]*len(errorBody)),
		fmt.Sprintf("perflab_target_request_duration_seconds_count %d", n),
		"perflab_target_in_flight_requests 0",
		"perflab_target_canceled_requests_total 0",
		"perflab_target_stalls_total 0",
	)
	for _, name := range []string{"go_goroutines ", "process_cpu_seconds_total "} {
		if !strings.Contains(string(body), "\n"+name) {
			t.Errorf("/metrics lacks %s", strings.TrimSpace(name))
		}
	}
}

func TestMetricsCountStalls(t *testing.T) {
	clock := newFakeClock()
	h := NewHTTP(HTTPConfig{StallFor: time.Second, StallEvery: 10 * time.Second}, clock.Now)
	clock.Set(29*time.Second + 500*time.Millisecond) // windows at 9s, 19s, 29s
	assertLines(t, scrape(t, h), "perflab_target_stalls_total 3")
}

// Two targets in one process must not share or collide on metrics.
func TestMetricsRegistryPerTarget(t *testing.T) {
	a := NewHTTP(HTTPConfig{}, nil)
	b := NewHTTP(HTTPConfig{}, nil)
	a.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	assertLines(t, scrape(t, a), `perflab_target_requests_total{code="200"} 1`)
	assertLines(t, scrape(t, b), `perflab_target_requests_total{code="200"} 0`)
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics status = %d", rec.Code)
	}
	return rec.Body.String()
}

// assertLines checks that each want is a whole line of the exposition.
func assertLines(t *testing.T, exposition string, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for l := range strings.Lines(exposition) {
		lines[strings.TrimSuffix(l, "\n")] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("/metrics lacks line %q", w)
		}
	}
}

// The resident memory is the process's own: its anonymous resident
// memory grows by its size, as it would not for a ballast.
func TestResidentIsResident(t *testing.T) {
	const size = 64 << 20
	// Free memory goes back to the OS first, and the collector is off
	// while the buffer is made: else a collection it sets off frees other
	// memory, the runtime's scavenger gives some back, and the growth
	// reads short of it (61.7 of 64 MiB beside two CPU hogs, 60.6 beside
	// the suite's other lines, with the collector on).
	debug.FreeOSMemory()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := rssAnon(t)
	h := NewHTTP(HTTPConfig{Resident: size}, nil)
	if grew := rssAnon(t) - before; grew < size-size/20 {
		t.Errorf("anonymous resident memory grew by %d bytes, want about the %d held", grew, size)
	}
	runtime.KeepAlive(h)
}

// rssAnon is RssAnon of /proc/self/status, in bytes.
func rssAnon(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("cannot parse %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Skip("no RssAnon in /proc/self/status")
	return 0
}

// The ballast is in the heap, reported on /metrics, and never touched.
func TestBallastIsHeldAndReported(t *testing.T) {
	const size = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := NewHTTP(HTTPConfig{Ballast: size}, nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew < size-size/20 { // other garbage may go meanwhile
		t.Errorf("heap in use grew by %d bytes, want about the %d of the ballast", grew, size)
	}
	assertLines(t, scrape(t, h), fmt.Sprintf("perflab_target_ballast_bytes %g", float64(size)))
	runtime.KeepAlive(h)
}
