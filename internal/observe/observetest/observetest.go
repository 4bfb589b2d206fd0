// Package observetest holds the test helpers the observe sources share:
// take a sample, compare points, a realistic /metrics text.
package observetest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// Sample samples src at at and fails the test on an error.
func Sample(t testing.TB, src observe.Source, at time.Time) []observe.Point {
	t.Helper()
	points, err := src.Sample(context.Background(), at)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return points
}

// CheckPoints reports an error unless got holds want's metrics in order,
// each value within 1e-9.
func CheckPoints(t testing.TB, got, want []observe.Point) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Metric == want[i].Metric && math.Abs(got[i].Value-want[i].Value) < 1e-9
	}
	if !ok {
		t.Errorf("points\n got %v\nwant %v", got, want)
	}
}

// Exposition is a /metrics text of about lines lines, shaped like a real
// service's: a few Go runtime families, then request latency histograms per
// handler and code: what a sampler parses every second (benchmarks of the
// scraper and of the dispatcher's lag under it).
func Exposition(lines int) string {
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
