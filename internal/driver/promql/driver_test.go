package promql

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

func newTestDriver(t *testing.T, c Config) *Driver {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func doOnce(d *Driver) driver.Result {
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	return r
}

// api answers every query with code and body, and keeps the last form.
type api struct {
	code int
	body string
	mu   sync.Mutex
	path string
	form url.Values
	hdr  http.Header
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	a.path, a.form, a.hdr = r.URL.Path, r.PostForm, r.Header.Clone()
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.code)
	_, _ = io.WriteString(w, a.body)
}

func startAPI(t *testing.T, code int, body string) (*api, string) {
	a := &api{code: code, body: body}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return a, srv.URL
}

const okVector = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1,"1"]},{"metric":{"a":"2"},"value":[1,"2"]}]}}`

func TestClasses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  int
		body  string
		class stats.Class
		msg   string
	}{
		{"ok", 200, okVector, stats.OK, ""},
		{"status error with 200", 200, `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}`,
			stats.Protocol, "status error: execution: query processing would load too many samples into memory"},
		{"partial", 200, `{"status":"success","isPartial":true,"data":{"resultType":"vector","result":[]}}`,
			stats.Partial, "partial response (isPartial: true)"},
		{"503", 503, `{"status":"error","errorType":"unavailable","error":"too many concurrent queries"}`,
			stats.Status5xx, "HTTP 503 Service Unavailable: unavailable: too many concurrent queries"},
		{"503 not json", 503, "<html>busy</html>", stats.Status5xx, "HTTP 503 Service Unavailable"},
		{"422", 422, `{"status":"error","errorType":"execution","error":"vector cannot contain metrics with the same labelset"}`,
			stats.Status4xx, "HTTP 422 Unprocessable Entity: execution: vector cannot contain metrics with the same labelset"},
		{"429", 429, `{"status":"error","errorType":"too_many_requests","error":"too many outstanding requests"}`,
			stats.RateLimited, "HTTP 429 Too Many Requests: too_many_requests: too many outstanding requests"},
		{"not json", 200, "<html>hello</html>", stats.Protocol, "cannot decode response: invalid JSON at byte 0"},
		{"unknown status", 200, `{"status":"weird"}`, stats.Protocol, `response status "weird", want success`},
		{"redirect", 302, "", stats.Protocol, "HTTP 302 Found (the API answers 2xx)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := startAPI(t, tc.code, tc.body)
			d := newTestDriver(t, Config{URL: base, Queries: []Query{{Name: "q", Expr: "up"}}})
			r := doOnce(d)
			if r.Op != "q" || r.Class != tc.class || r.Message != tc.msg || r.BytesRecv != int64(len(tc.body)) || r.TTFB <= 0 {
				t.Errorf("%+v\nwant class %s, message %q, %d bytes", r, tc.class, tc.msg, len(tc.body))
			}
		})
	}
}

// TestRequests: queries run in turn, each its own op; instant queries at
// now, range queries from now-range to now by step, as form posts.
func TestRequests(t *testing.T) {
	a, base := startAPI(t, 200, okVector)
	d := newTestDriver(t, Config{URL: base + "/prometheus/", Headers: map[string]string{"X-Scope-OrgID": "t1"},
		Queries: []Query{
			{Name: "up", Expr: "up == 1"},
			{Name: "cpu", Expr: `rate(node_cpu_seconds_total{mode="idle"}[5m])`, Type: Range, Range: time.Hour, Step: 30 * time.Second},
			{Expr: "sum(node_load1)", Type: Range},
		}})
	d.now = func() time.Time { return time.UnixMilli(1_700_000_000_123) }
	want := []struct {
		op, path string
		form     url.Values
	}{
		{"up", "/prometheus/api/v1/query", url.Values{"query": {"up == 1"}, "time": {"1700000000.123"}}},
		{"cpu", "/prometheus/api/v1/query_range", url.Values{"query": {`rate(node_cpu_seconds_total{mode="idle"}[5m])`},
			"start": {"1699996400.123"}, "end": {"1700000000.123"}, "step": {"30"}}},
		{"sum(node_load1)", "/prometheus/api/v1/query_range", url.Values{"query": {"sum(node_load1)"},
			"start": {"1699996400.123"}, "end": {"1700000000.123"}, "step": {"15"}}},
	}
	for i := range 6 {
		w := want[i%3]
		r := doOnce(d)
		if r.Op != w.op || r.Class != stats.OK || r.BytesSent != int64(len(w.form.Encode())) {
			t.Errorf("query %d: %+v", i, r)
		}
		if a.path != w.path || a.form.Encode() != w.form.Encode() || a.hdr.Get("X-Scope-OrgID") != "t1" {
			t.Errorf("query %d: %s %v, want %s %v", i, a.path, a.form, w.path, w.form)
		}
	}
	facts := map[string]string{}
	for _, f := range d.Facts() {
		facts[f.Name] = f.Value
	}
	if facts["answers"] != "6" || facts["series returned"] != "12" || facts["points returned"] != "12" ||
		facts["requests/s"] != "0.2" || facts["queries"] != "3" {
		t.Errorf("facts %v", facts)
	}
	if got := strings.Join(d.Names(), ","); got != "up,cpu,sum(node_load1)" {
		t.Errorf("names %s", got)
	}
}

func TestTimeoutAndInterrupt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	d := newTestDriver(t, Config{URL: srv.URL, Timeout: 50 * time.Millisecond, Queries: []Query{{Expr: "up"}}})
	if r := doOnce(d); r.Class != stats.Timeout || r.Message != "query timed out after 50ms" || r.TTFB <= 0 {
		t.Errorf("body cut by the timeout: %+v", r)
	}
	d = newTestDriver(t, Config{URL: srv.URL, Queries: []Query{{Expr: "up"}}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var r driver.Result
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("cancelled: %+v", r)
	}
}
