package scrape

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe/observetest"
)

// BenchmarkSample scrapes and reads a 1,000-line /metrics, as the sampler
// does every second for every component: the CPU and allocations of one
// sample.
func BenchmarkSample(b *testing.B) {
	body := []byte(observetest.Exposition(1000))
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

// BenchmarkRead is the scanner alone on a 1,000-line exposition, and
// expfmt's parser on the same text, as the scraper used before.
func BenchmarkRead(b *testing.B) {
	body := []byte(observetest.Exposition(1000))
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
