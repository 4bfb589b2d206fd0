package scrape

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// BenchmarkSample scrapes and reads a 1,000-line /metrics, as the sampler
// does every second for every component: the CPU and allocations of one
// sample.
func BenchmarkSample(b *testing.B) {
	body := []byte(exposition1000(1000))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}))
	b.Cleanup(ts.Close)
	s := New(ts.URL, 5*time.Second, []string{"http_request_duration_seconds_3_count"})
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Sample(context.Background(), now.Add(time.Duration(i)*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// exposition1000 is a /metrics text of about lines lines, shaped like a real
// service's: a few Go runtime families, then request latency histograms per
// handler and code.
func exposition1000(lines int) string {
	var b strings.Builder
	b.WriteString("# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n")
	b.WriteString("# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes 1.2345678e+07\n")
	b.WriteString("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n")
	b.WriteString("# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 9.8304e+07\n")
	b.WriteString("# TYPE go_gc_duration_seconds summary\ngo_gc_duration_seconds{quantile=\"0.5\"} 2.1e-05\ngo_gc_duration_seconds_sum 0.0042\ngo_gc_duration_seconds_count 17\n")
	buckets := []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"}
	n := 15
	for h := 0; n < lines; h++ {
		handler := fmt.Sprintf("/api/v1/endpoint_%d", h)
		fmt.Fprintf(&b, "# HELP http_request_duration_seconds_%d Latency of %s.\n# TYPE http_request_duration_seconds_%d histogram\n", h, handler, h)
		n += 2
		for _, code := range []string{"200", "404", "500"} {
			for i, le := range buckets {
				fmt.Fprintf(&b, "http_request_duration_seconds_%d_bucket{handler=%q,code=%q,le=%q} %d\n", h, handler, code, le, 100*(i+1))
			}
			fmt.Fprintf(&b, "http_request_duration_seconds_%d_sum{handler=%q,code=%q} 123.456\n", h, handler, code)
			fmt.Fprintf(&b, "http_request_duration_seconds_%d_count{handler=%q,code=%q} 1200\n", h, handler, code)
			n += len(buckets) + 2
		}
	}
	return b.String()
}

// BenchmarkRead is the scanner alone on a 1,000-line exposition, and
// expfmt's parser on the same text, as the scraper used before.
func BenchmarkRead(b *testing.B) {
	body := []byte(exposition1000(1000))
	b.Run("scanner", func(b *testing.B) {
		t := newTextReader([]string{heapInuse, goroutines, rss, cpuSeconds, gcCount})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := t.read(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("expfmt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := expfmt.NewTextParser(model.UTF8Validation)
			if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
