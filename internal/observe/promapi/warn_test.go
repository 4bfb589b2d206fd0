package promapi

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// An OOM kill inside the window is told once, by the restart; the series
// of the last termination's reason, which kube-state-metrics has only
// from the first termination on, starting late is no gap.
func TestOOMKillInTheWindowIsNoGap(t *testing.T) {
	mid := winStart.Add(30 * time.Second)
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(0.5, "pod", "tempo-ingester-0")}
	f.answers["container_memory_working_set_bytes"] = []fakeSeries{constant(1<<20, "pod", "tempo-ingester-0")}
	f.answers["kube_pod_container_status_restarts_total"] = []fakeSeries{{labels: map[string]string{"pod": "tempo-ingester-0"},
		value: func(t time.Time) float64 {
			if t.Before(mid) {
				return 0
			}
			return 1
		}}}
	f.answers["kube_pod_container_status_last_terminated_reason"] = []fakeSeries{between(1, mid, time.Time{}, "pod", "tempo-ingester-0")}
	res := queryWindow(t, kubernetesSource(t, f, nil))
	want := []string{"component tempo-ingester restarted 1 times in the window (the last termination of one of its containers was OOMKilled)"}
	if !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
}

func TestWarnings(t *testing.T) {
	ingester := func(v float64) []fakeSeries { return []fakeSeries{constant(v, "pod", "tempo-ingester-0")} }
	mid := winStart.Add(30 * time.Second)
	for _, tc := range []struct {
		name string
		set  func(f *fakeAPI)
		edit func(*Config)
		want string // a warning containing this; "" for none
	}{
		{"clean", func(f *fakeAPI) {}, nil, ""},
		{"no series", func(f *fakeAPI) { delete(f.answers, "container_memory_working_set_bytes") }, nil,
			"no series for working_set_bytes"},
		{"one component lacks a metric", func(f *fakeAPI) {
			f.answers["container_cpu_usage_seconds_total"] = append(ingester(1), constant(1, "pod", "tempo-distributor-a"))
		}, nil, "component tempo-distributor has no working_set_bytes series"},
		{"stale", func(f *fakeAPI) {
			f.answers["container_memory_working_set_bytes"] = []fakeSeries{between(1, time.Time{}, mid, "pod", "tempo-ingester-0")}
		}, nil, "ends at 17:24:30 UTC, before the window's last step at 17:25:00: it went stale"},
		{"starts late", func(f *fakeAPI) {
			f.answers["container_memory_working_set_bytes"] = []fakeSeries{between(1, mid, time.Time{}, "pod", "tempo-ingester-0")}
		}, nil, "starts at 17:24:30 UTC, after the window's first step at 17:24:05"},
		{"gaps", func(f *fakeAPI) {
			f.answers["container_memory_working_set_bytes"] = []fakeSeries{{labels: map[string]string{"pod": "tempo-ingester-0"},
				value: func(t time.Time) float64 {
					if t.Equal(mid) {
						return math.NaN()
					}
					return 1
				}}}
		}, nil, "has values at 11 of the window's 12 steps"},
		{"api warnings", func(f *fakeAPI) { f.warnings = []string{"too many samples, result truncated"} }, nil,
			"came with a warning: too many samples, result truncated"},
		{"partial", func(f *fakeAPI) { f.partial = true }, nil, "was partial (isPartial: true)"},
		{"step too coarse", func(f *fakeAPI) {}, func(c *Config) { c.Step = 15 * time.Second },
			"step 15s leaves 4 values per series in the window (1m0s): too few for a P99"},
		{"counter reset", func(f *fakeAPI) { f.resets["container_cpu_usage_seconds_total"] = 2 }, nil,
			"counter container_cpu_usage_seconds_total{"},
		{"restart after an OOM kill", func(f *fakeAPI) {
			f.answers["kube_pod_container_status_restarts_total"] = []fakeSeries{{labels: map[string]string{"pod": "tempo-ingester-0"},
				value: func(t time.Time) float64 {
					if t.Before(mid) {
						return 3
					}
					return 4
				}}}
			f.answers["kube_pod_container_status_last_terminated_reason"] = ingester(1)
		}, nil, "component tempo-ingester restarted 1 times in the window (the last termination of one of its containers was OOMKilled)"},
		{"split label does not match", func(f *fakeAPI) {
			f.answers["container_memory_working_set_bytes"] = append(ingester(1), constant(1, "pod", "loki-0"))
		}, nil, `1 series of working_set_bytes do not match pod=~"tempo-(ingester|distributor)-.*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.answers["container_cpu_usage_seconds_total"] = ingester(0.5)
			f.answers["container_memory_working_set_bytes"] = ingester(1 << 20)
			tc.set(f)
			res := queryWindow(t, kubernetesSource(t, f, tc.edit))
			if tc.want == "" {
				if len(res.Warnings) > 0 {
					t.Fatalf("warnings %q, want none", res.Warnings)
				}
				return
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, tc.want) {
					return
				}
			}
			t.Fatalf("warnings %q lack %q", res.Warnings, tc.want)
		})
	}
}

func TestEveryQueryFailingIsAnError(t *testing.T) {
	f := newFakeAPI(t)
	s := kubernetesSource(t, f, nil)
	f.srv.Close()
	_, err := s.Query(t.Context(), winStart, winEnd)
	if err == nil {
		t.Fatal("no error with the API gone")
	}
	// One line, the cause once: it is a warning in the report's list, and
	// every query failed alike.
	if msg := err.Error(); strings.Contains(msg, "\n") || strings.Count(msg, "connection refused") != 1 || !strings.Contains(msg, "(every query: ") {
		t.Errorf("error %q", msg)
	}
}

// TestStepTooCoarseForAP99: the step is too coarse exactly when it leaves
// a series fewer values in the window, (start, end] as the analysis takes
// it, than a P99 needs (analysis.MinSamplesP99); a step that leaves enough
// is not. Over the 60 s window a 10 s step leaves 6 values: no P99, and
// the report must say the step is why.
func TestStepTooCoarseForAP99(t *testing.T) {
	if minValuesP99 != analysis.MinSamplesP99 {
		t.Fatalf("minValuesP99 %d, analysis.MinSamplesP99 %d", minValuesP99, analysis.MinSamplesP99)
	}
	for _, tc := range []struct {
		step   time.Duration
		values int // in (winStart, winEnd]
	}{{5 * time.Second, 12}, {6 * time.Second, 10}, {7 * time.Second, 9}, {10 * time.Second, 6}, {12 * time.Second, 5}, {15 * time.Second, 4}} {
		f := newFakeAPI(t)
		f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(0.5, "pod", "tempo-ingester-0")}
		f.answers["container_memory_working_set_bytes"] = []fakeSeries{constant(1<<20, "pod", "tempo-ingester-0")}
		res := queryWindow(t, kubernetesSource(t, f, func(c *Config) { c.Step = tc.step }))
		warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "too few for a P99") })
		if warned != (tc.values < analysis.MinSamplesP99) {
			t.Errorf("step %v (%d values): warned %v: %q", tc.step, tc.values, warned, res.Warnings)
		}
		got := 0
		for _, p := range res.Series["tempo-ingester"]["working_set_bytes"] {
			if p.T.After(winStart) && !p.T.After(winEnd) {
				got++
			}
		}
		if got != tc.values {
			t.Errorf("step %v: %d values in the window, want %d", tc.step, got, tc.values)
		}
	}
}
