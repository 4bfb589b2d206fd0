package export

import (
	"testing"

	"github.com/perflab/perflab/internal/observe"
)

// A component's stored metric becomes its series name and, for a metric
// the plan listed, the name label: a gauge, a counter or a histogram's
// bucket each under its own series.
func TestComponentMetric(t *testing.T) {
	for stored, want := range map[string][2]string{
		observe.MetricPrefix + "queue":                      {"perflab_component_metric", "queue"},
		observe.CounterPrefix + "requests_total":            {"perflab_component_counter", "requests_total"},
		observe.BucketPrefix + "ttft_seconds_bucket le=0.1": {"perflab_component_bucket", "ttft_seconds_bucket le=0.1"},
		observe.CPUCores:                                    {"perflab_component_cpu_cores", ""},
	} {
		if name, label := componentMetric(stored); name != want[0] || label != want[1] {
			t.Errorf("%q: %q %q, want %q %q", stored, name, label, want[0], want[1])
		}
	}
}
