package scrape

import (
	"math"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
)

// A histogram named by its _bucket name is read bucket by bucket, each
// bound's cumulative count summed over the series (two models here);
// a name of no histogram gives nothing.
func TestScraperReadsHistogramBuckets(t *testing.T) {
	srv, url := start(t)
	s := New(url, time.Second, []string{"ttft_seconds_bucket", "queue_bucket"})
	srv.set(200, `# TYPE ttft_seconds histogram
ttft_seconds_bucket{model="a",le="0.1"} 3
ttft_seconds_bucket{model="a",le="1"} 5
ttft_seconds_bucket{model="a",le="+Inf"} 6
ttft_seconds_sum{model="a"} 2
ttft_seconds_count{model="a"} 6
ttft_seconds_bucket{model="b",le="0.1"} 1
ttft_seconds_bucket{model="b",le="1"} 1
ttft_seconds_bucket{model="b",le="+Inf"} 2
ttft_seconds_sum{model="b"} 9
ttft_seconds_count{model="b"} 2
# TYPE queue gauge
queue 4
`)
	observetest.CheckPoints(t, observetest.Sample(t, s, t0), []observe.Point{
		{Metric: BucketMetric("ttft_seconds_bucket", 0.1), Value: 4},
		{Metric: BucketMetric("ttft_seconds_bucket", 1), Value: 6},
		{Metric: BucketMetric("ttft_seconds_bucket", math.Inf(1)), Value: 8},
	})
	name, le, ok := ParseBucketMetric(BucketMetric("vllm:x_bucket", 0.25))
	if !ok || name != "vllm:x_bucket" || le != 0.25 {
		t.Errorf("parsed back %q %v %v", name, le, ok)
	}
	if _, _, ok := ParseBucketMetric(observe.MetricPrefix + "x"); ok {
		t.Error("a named metric parsed as a bucket")
	}
}
