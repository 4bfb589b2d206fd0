package report

import (
	"math"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
)

// A listed byte level of "no limit" (GOMEMLIMIT off is the largest int64)
// reads "off", not 8388608 TiB; a real limit reads as a size.
func TestNoLimitReadsOff(t *testing.T) {
	v := metricValue(analysis.NamedMetric{Name: "go_gc_gomemlimit_bytes"})
	if got := v(math.MaxInt64); got != "off" {
		t.Errorf("GOMEMLIMIT off: %q", got)
	}
	if got := v(float64(math.MaxInt64 - 4095)); got != "off" {
		t.Errorf("cgroup v1 no limit: %q", got)
	}
	if got := v(2 << 30); got == "off" || got == "" {
		t.Errorf("2 GiB: %q", got)
	}
	if got := metricValue(analysis.NamedMetric{Name: "bytes_sent_bytes", Counter: true})(math.MaxInt64); got == "off" {
		t.Errorf("a counter's rate is no limit: %q", got)
	}
}
