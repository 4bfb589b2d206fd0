package scrape

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
	"github.com/perflab/perflab/internal/testutil"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// exposition renders a /metrics text with the given counters.
func exposition(cpu, gc float64, requests [2]int) string {
	r := strings.NewReplacer(
		"CPU", ftoa(cpu), "GC", ftoa(gc),
		"REQ0", ftoa(float64(requests[0])), "REQ1", ftoa(float64(requests[1])))
	return r.Replace(`# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
go_gc_duration_seconds{quantile="1"} 0.000311
go_gc_duration_seconds_sum 0.0042
go_gc_duration_seconds_count GC
# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 1.2345678e+07
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total CPU
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 9.8304e+07
# TYPE http_requests_total counter
http_requests_total{code="200"} REQ0
http_requests_total{code="500"} REQ1
# TYPE request_duration_seconds histogram
request_duration_seconds_bucket{le="0.1"} 3
request_duration_seconds_bucket{le="+Inf"} 4
request_duration_seconds_sum 0.5
request_duration_seconds_count 4
queue_length{shard="a"} 3
queue_length{shard="b"} 4
`)
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// server serves whatever body holds, recording the Accept header.
type server struct {
	mu     sync.Mutex
	body   string
	status int
	accept string
}

func (s *server) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *server) lastAccept() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accept
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accept = r.Header.Get("Accept")
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(s.status)
	_, _ = w.Write([]byte(s.body))
}

func start(t *testing.T) (*server, string) {
	t.Helper()
	s := &server{status: http.StatusOK}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL + "/metrics"
}

func TestScraperRatesAndExtras(t *testing.T) {
	srv, url := start(t)
	extra := []string{"http_requests_total", "queue_length", "request_duration_seconds_count",
		"request_duration_seconds_sum", "request_duration_seconds", "not_exposed"}
	s := New(url, time.Second, extra)
	if s.Name() != "scrape "+url {
		t.Errorf("Name = %q", s.Name())
	}
	gauges := []observe.Point{
		{Metric: observe.GoHeapInuseBytes, Value: 12345678},
		{Metric: observe.GoGoroutines, Value: 42},
		{Metric: observe.ProcessRSSBytes, Value: 98304000},
	}
	extras := func(requests float64) []observe.Point {
		return []observe.Point{
			{Metric: observe.CounterPrefix + "http_requests_total", Value: requests},
			{Metric: observe.MetricPrefix + "queue_length", Value: 7},
			{Metric: observe.CounterPrefix + "request_duration_seconds_count", Value: 4},
			{Metric: observe.CounterPrefix + "request_duration_seconds_sum", Value: 0.5},
		}
	}
	with := func(parts ...[]observe.Point) (all []observe.Point) {
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	srv.set(200, exposition(100, 20, [2]int{1000, 10}))
	observetest.CheckPoints(t, observetest.Sample(t, s, t0), with(gauges, extras(1010)))
	if got := srv.lastAccept(); got != accept {
		t.Errorf("Accept = %q, want %q", got, accept)
	}
	// 10 s later: 5 CPU seconds, 5 GC cycles.
	srv.set(200, exposition(105, 25, [2]int{1500, 20}))
	observetest.CheckPoints(t, observetest.Sample(t, s, t0.Add(10*time.Second)), with(gauges, []observe.Point{
		{Metric: observe.ProcessCPUCores, Value: 0.5},
		{Metric: observe.GCPerMin, Value: 30},
	}, extras(1520)))
	// The component restarted: counters start over, no rate this time…
	srv.set(200, exposition(2, 1, [2]int{5, 0}))
	observetest.CheckPoints(t, observetest.Sample(t, s, t0.Add(20*time.Second)), with(gauges, extras(5)))
	// …and from the new baseline the next time.
	srv.set(200, exposition(4, 3, [2]int{9, 0}))
	observetest.CheckPoints(t, observetest.Sample(t, s, t0.Add(22*time.Second)), with(gauges, []observe.Point{
		{Metric: observe.ProcessCPUCores, Value: 1},
		{Metric: observe.GCPerMin, Value: 60},
	}, extras(9)))
}

func TestScraperMissingMetricsAreAbsent(t *testing.T) {
	srv, url := start(t)
	srv.set(200, "# TYPE go_goroutines gauge\ngo_goroutines 3\n")
	s := New(url, time.Second, []string{"nothing_here"})
	observetest.CheckPoints(t, observetest.Sample(t, s, t0), []observe.Point{{Metric: observe.GoGoroutines, Value: 3}})
	observetest.CheckPoints(t, observetest.Sample(t, s, t0.Add(time.Second)), []observe.Point{{Metric: observe.GoGoroutines, Value: 3}})
}

func TestScraperErrors(t *testing.T) {
	srv, url := start(t)
	s := New(url, time.Second, nil)
	srv.set(http.StatusServiceUnavailable, "not ready")
	_, err := s.Sample(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "503 Service Unavailable") {
		t.Errorf("503: error %v, want the URL and the status", err)
	}
	srv.set(200, "go_goroutines{ 3\n")
	_, err = s.Sample(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), "cannot parse the metrics of "+url) {
		t.Errorf("bad text: error %v, want a parse error naming the URL", err)
	}
	_, err = New("http://127.0.0.1:1/metrics", time.Second, nil).Sample(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), "cannot scrape http://127.0.0.1:1/metrics") {
		t.Errorf("no server: error %v", err)
	}
}

func TestScraperTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	started := time.Now()
	_, err := New(ts.URL, 50*time.Millisecond, nil).Sample(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("error %v, want a timeout", err)
	}
	if d := time.Since(started); d > 5*time.Second {
		t.Errorf("Sample took %v with a 50 ms timeout", d)
	}
}

func TestScraperReadsProtobufWhenServed(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines", Help: "h"})
	g.Set(11)
	reg.MustRegister(g)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mfs, err := reg.Gather()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		format := expfmt.NewFormat(expfmt.TypeProtoDelim)
		w.Header().Set("Content-Type", string(format))
		enc := expfmt.NewEncoder(w, format)
		for _, mf := range mfs {
			_ = enc.Encode(mf)
		}
	}))
	t.Cleanup(ts.Close)
	observetest.CheckPoints(t, observetest.Sample(t, New(ts.URL, time.Second, nil), t0), []observe.Point{{Metric: observe.GoGoroutines, Value: 11}})
}

// A real client_golang registry with its Go and process collectors. The
// test burns a core for 300 ms between two samples, so the process's CPU
// reads at least 0.2 cores, if the machine gave the test the 0.3 cores
// that figure needs (the process collector counts in 10 ms ticks); and
// whatever the machine gave, it reads what the kernel says this process
// used between the samples (getrusage), within 0.1 cores: two 10 ms ticks
// of 300 ms, and the scrapes' own work.
func TestScraperOfARealRegistry(t *testing.T) {
	testutil.Alone(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ts.Close)
	s := New(ts.URL, 5*time.Second, nil)
	machine := testutil.Measure(t)
	begin := time.Now()
	cpuBegin := selfCPU(t)
	observetest.Sample(t, s, begin)
	var garbage [][]byte
	for time.Since(begin) < 300*time.Millisecond { // CPU and GC cycles to see
		garbage = append(garbage, make([]byte, 1<<16))
		if len(garbage) > 256 {
			garbage = garbage[:0]
		}
	}
	runtime.GC()
	end := time.Now()
	points := observetest.Sample(t, s, end)
	used := (selfCPU(t) - cpuBegin).Seconds() / end.Sub(begin).Seconds()
	got := map[string]float64{}
	for _, p := range points {
		got[p.Metric] = p.Value
	}
	t.Logf("%v", points)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, c := range []struct {
		metric   string
		min, max float64
	}{
		{observe.GoHeapInuseBytes, 1 << 16, 4 * float64(ms.HeapSys)},
		{observe.GoGoroutines, 2, float64(runtime.NumGoroutine() + 20)},
		{observe.ProcessRSSBytes, 1 << 20, 16 << 30},
		{observe.ProcessCPUCores, 0, float64(runtime.NumCPU()) * 1.1},
		{observe.GCPerMin, 60, math.Inf(1)}, // at least the forced GC in 300 ms
	} {
		if v, ok := got[c.metric]; !ok || v < c.min || v > c.max {
			t.Errorf("%s = %v (present %v), want within [%v, %v]", c.metric, v, ok, c.min, c.max)
		}
	}
	cores := got[observe.ProcessCPUCores]
	if math.Abs(cores-used) > 0.1 {
		t.Errorf("%s = %v, where the kernel says the process used %.3f cores between the samples", observe.ProcessCPUCores, cores, used)
	}
	machine.Check(t, cores >= 0.2, testutil.Need{Cores: 0.3}, "%s = %v, want at least 0.2 from a core burnt for 300 ms", observe.ProcessCPUCores, cores)
}
