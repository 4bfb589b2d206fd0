package promapi

import (
	"strings"
	"testing"
)

// TestCheckBeforeLoad: with cAdvisor's series present, Check finds nothing
// to say (kube-state-metrics' optional restarts are absent without a
// word); without the working set it warns of that query alone; a query
// the API refuses as bad PromQL and an API that is gone are errors, the
// cause named once.
func TestCheckBeforeLoad(t *testing.T) {
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(0.5, "pod", "tempo-ingester-0")}
	f.answers["container_memory_working_set_bytes"] = []fakeSeries{constant(1e9, "pod", "tempo-ingester-0")}
	s := kubernetesSource(t, f, nil)
	if warns, err := s.Check(t.Context(), winEnd); err != nil || len(warns) != 0 {
		t.Errorf("every required series present: warnings %q, error %v", warns, err)
	}

	delete(f.answers, "container_memory_working_set_bytes")
	warns, err := s.Check(t.Context(), winEnd)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "no series for working_set_bytes yet") ||
		!strings.Contains(warns[0], `namespace="tempo"`) {
		t.Errorf("no working set: warnings %q, error %v", warns, err)
	}

	bad := kubernetesSource(t, f, func(c *Config) {
		c.Queries = map[string]string{"metric:queue": "sum by (pod) (rate(queue_length[1m])"}
	})
	f.refuse = "queue_length"
	_, err = bad.Check(t.Context(), winEnd)
	if err == nil || !strings.Contains(err.Error(), "refused the query of metric:queue") || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("bad PromQL: error %v", err)
	}

	f.srv.Close()
	_, err = s.Check(t.Context(), winEnd)
	if err == nil || strings.Count(err.Error(), "connection refused") != 1 || !strings.Contains(err.Error(), "cannot query prometheus at "+f.srv.URL) {
		t.Errorf("API gone: error %v", err)
	}
}
