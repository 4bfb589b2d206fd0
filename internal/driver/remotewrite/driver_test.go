package remotewrite

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// receiver is a fake remote write endpoint: it checks the headers, decodes
// every body, and answers with status(n) for request number n (from 0).
type receiver struct {
	t      *testing.T
	status func(n int) int
	mu     sync.Mutex
	n      int
	bodies int // requests decoded
	series int // series in them
	header http.Header
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	n := rc.n
	rc.n++
	rc.header = r.Header.Clone()
	rc.mu.Unlock()
	for k, v := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0"} {
		if got := r.Header.Get(k); got != v {
			rc.t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	body, _ := io.ReadAll(r.Body)
	req := decode(rc.t, body)
	rc.mu.Lock()
	rc.bodies++
	rc.series += len(req.Timeseries)
	rc.mu.Unlock()
	code := http.StatusNoContent
	if rc.status != nil {
		code = rc.status(n)
	}
	w.WriteHeader(code)
	if code >= 400 {
		_, _ = io.WriteString(w, "rejected: out of order sample\nsecond line\n")
	}
}

func startReceiver(t *testing.T, status func(n int) int) (*receiver, string) {
	rc := &receiver{t: t, status: status}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL + "/api/v1/write"
}

func doOnce(d *Driver, vu int) driver.Result {
	var r driver.Result
	d.Do(context.Background(), vu, &r)
	return r
}

func TestDoClasses(t *testing.T) {
	for _, tc := range []struct {
		code  int
		class stats.Class
		msg   string
	}{
		{204, stats.OK, ""},
		{200, stats.OK, ""},
		{400, stats.Status4xx, "HTTP 400 Bad Request: rejected: out of order sample"},
		{429, stats.RateLimited, "HTTP 429 Too Many Requests: rejected: out of order sample"},
		{503, stats.Status5xx, "HTTP 503 Service Unavailable: rejected: out of order sample"},
		{302, stats.Protocol, "HTTP 302 Found (remote write wants 2xx)"},
	} {
		rc, url := startReceiver(t, func(int) int { return tc.code })
		d := newTestDriver(t, Config{URL: url, Targets: 2, SeriesPerTarget: 400, Batch: 300,
			Headers: map[string]string{"X-Scope-OrgID": "tenant-1", "Authorization": "Bearer s3cret"}})
		r := doOnce(d, 0)
		if r.Op != OpWrite || r.Class != tc.class || r.Message != tc.msg || r.BytesSent <= 0 || r.TTFB <= 0 {
			t.Errorf("HTTP %d: %+v", tc.code, r)
		}
		if rc.series != 300 || rc.header.Get("X-Scope-OrgID") != "tenant-1" || rc.header.Get("User-Agent") != "perflab" {
			t.Errorf("HTTP %d: receiver got %d series, headers %v", tc.code, rc.series, rc.header)
		}
		_, samples, _, _ := d.acks.snapshot()
		if want := map[bool]int64{true: 300, false: 0}[tc.class == stats.OK]; samples != want {
			t.Errorf("HTTP %d: %d samples acknowledged, want %d", tc.code, samples, want)
		}
	}
}

func TestDoErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	d := newTestDriver(t, Config{URL: srv.URL, Targets: 1, SeriesPerTarget: 400, Timeout: 50 * time.Millisecond})
	if r := doOnce(d, 0); r.Class != stats.Timeout || r.Message != "request timed out after 50ms" {
		t.Errorf("slow receiver: %+v", r)
	}
	d = newTestDriver(t, Config{URL: srv.URL, Targets: 1, SeriesPerTarget: 400, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	var r driver.Result
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("cancelled: %+v", r)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	d = newTestDriver(t, Config{URL: closed.URL, Targets: 1, SeriesPerTarget: 400})
	if r := doOnce(d, 0); r.Class != stats.Connect {
		t.Errorf("closed port: %+v", r)
	}
}

// TestRetries: a batch answered 503 or 429 is resent by a later Do after the
// backoff, as its own operation; after the last retry it is given up; a
// 400 is never retried. The facts count it all.
func TestRetries(t *testing.T) {
	codes := []int{503, 429, 204, 503, 503, 503, 400}
	rc, url := startReceiver(t, func(n int) int {
		if n < len(codes) {
			return codes[n]
		}
		return 204
	})
	d := newTestDriver(t, Config{URL: url, Targets: 1, SeriesPerTarget: 400, Batch: 100, Retries: 2,
		RetryBackoff: time.Millisecond})
	var ops []string
	for range 7 {
		time.Sleep(5 * time.Millisecond) // past the backoff: a due retry goes first
		r := doOnce(d, 0)
		ops = append(ops, r.Op+":"+r.Class.String())
	}
	want := "remote_write:status_5xx remote_write_retry:rate_limited remote_write_retry:ok " +
		"remote_write:status_5xx remote_write_retry:status_5xx remote_write_retry:status_5xx remote_write:status_4xx"
	if strings.Join(ops, " ") != want {
		t.Errorf("ops\n%s\nwant\n%s", strings.Join(ops, " "), want)
	}
	facts := factMap(d.Facts())
	if facts["retries sent"] != "4" || facts["batches given up after retries"] != "1" ||
		facts["samples acknowledged"] != "100" || facts["batches still queued for retry"] != "0" {
		t.Errorf("facts %v", facts)
	}
	if rc.bodies != 7 {
		t.Errorf("receiver decoded %d bodies, want 7", rc.bodies)
	}
}

func factMap(fs []driver.Fact) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Name] = f.Value
	}
	return m
}

// TestAckLog: series are counted once however many samples they get, and
// across instances.
func TestAckLog(t *testing.T) {
	a := ackLog{spt: 130}
	a.add(&batch{segs: []segment{{id: 1, lo: 0, hi: 130}, {id: 2, lo: 0, hi: 70}}, samples: 200, ts: 5000}, time.Unix(10, 0))
	a.add(&batch{segs: []segment{{id: 2, lo: 60, hi: 130}, {id: 1, lo: 0, hi: 5}}, samples: 75, ts: 4000}, time.Unix(11, 0))
	series, samples, first, last := a.snapshot()
	if series != 260 || samples != 275 || first != 4000 || last != 5000 || !a.readBack(nil).AckedAt.Equal(time.Unix(11, 0)) {
		t.Errorf("series %d samples %d first %d last %d, last acknowledged %v", series, samples, first, last, a.readBack(nil).AckedAt)
	}
}

// TestConcurrentVUs: VUs share the cursor, so 8 VUs × 25 requests of 100
// samples take 20,000 samples in turn, every one of the 1,200 series
// among them, and the receiver gets all.
func TestConcurrentVUs(t *testing.T) {
	rc, url := startReceiver(t, nil)
	d := newTestDriver(t, Config{URL: url, Targets: 3, SeriesPerTarget: 400, Batch: 100})
	var wg sync.WaitGroup
	for vu := range 8 {
		wg.Go(func() {
			for range 25 {
				if r := doOnce(d, vu); r.Class != stats.OK {
					t.Errorf("vu %d: %+v", vu, r)
				}
			}
		})
	}
	wg.Wait()
	series, samples, _, _ := d.acks.snapshot()
	if samples != 20000 || series != 1200 || rc.series != 20000 || d.gen.cursor.Load() != 20000 {
		t.Errorf("acknowledged %d samples of %d series; receiver got %d; cursor %d", samples, series, rc.series, d.gen.cursor.Load())
	}
}
