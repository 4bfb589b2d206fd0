package promapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/plan"
)

// window is a phase window of 60 s on whole minutes, so that 5 s steps
// fall on its ends.
var (
	winStart = time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC)
	winEnd   = winStart.Add(60 * time.Second)
)

func kubernetesSource(t *testing.T, f *fakeAPI, edit func(*Config)) *Source {
	t.Helper()
	cfg := Config{Name: "tempo", URL: f.srv.URL, Preset: "kubernetes",
		Selector: Selector{Namespace: "tempo", Pod: "tempo-(ingester|distributor)-.*", Container: "tempo"}}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Resolve(context.Background())
	return s
}

func queryWindow(t *testing.T, s *Source) *Result {
	t.Helper()
	res, err := s.Query(context.Background(), winStart, winEnd)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkAll checks that every point of a series in the window has value want.
func checkAll(t *testing.T, res *Result, comp, metric string, want float64) {
	t.Helper()
	pts := inWindow(res.Series[comp][metric], winStart, winEnd)
	if len(pts) != 13 { // 0, 5, …, 60 s
		t.Fatalf("%s %s: %d points in the window, want 13: %v", comp, metric, len(pts), res.Series[comp][metric])
	}
	for _, p := range pts {
		if p.V != want {
			t.Fatalf("%s %s at %v = %g, want %g", comp, metric, p.T, p.V, want)
		}
	}
}

func TestKubernetesGroupsPodsByCaptureGroup(t *testing.T) {
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{
		constant(0.5, "pod", "tempo-ingester-0"), constant(0.25, "pod", "tempo-ingester-1"),
		constant(0.125, "pod", "tempo-distributor-7d9f-xk2"),
	}
	f.answers["container_memory_working_set_bytes"] = []fakeSeries{
		constant(100<<20, "pod", "tempo-ingester-0"), constant(50<<20, "pod", "tempo-ingester-1"),
		constant(10<<20, "pod", "tempo-distributor-7d9f-xk2"),
	}
	s := kubernetesSource(t, f, nil)
	if !s.Splits() {
		t.Fatal("a pod regex with a capture group must split")
	}
	res := queryWindow(t, s)
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %q", res.Warnings)
	}
	if len(res.Series) != 2 {
		t.Fatalf("components %v, want tempo-ingester and tempo-distributor", sortedNames(res.Series))
	}
	checkAll(t, res, "tempo-ingester", observe.CgroupCPUCores, 0.75)
	checkAll(t, res, "tempo-distributor", observe.CgroupCPUCores, 0.125)
	checkAll(t, res, "tempo-ingester", observe.WorkingSetBytes, 150<<20)
	checkAll(t, res, "tempo-distributor", observe.WorkingSetBytes, 10<<20)
	cpu := f.queries[0].query
	for _, want := range []string{`namespace="tempo"`, `pod=~"tempo-(ingester|distributor)-.*"`, `container="tempo"`,
		"sum by (pod) (max by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{", "[1m]"} {
		if !strings.Contains(cpu, want) {
			t.Errorf("CPU query %s lacks %s", cpu, want)
		}
	}
}

// The presets' rate() takes Grafana's $__rate_interval, max(step + scrape
// interval, 4 × scrape interval): 20s at the fake's 5 s; the kubernetes
// preset's at least 1m, four of cAdvisor's 15 s; a plan's rate_window as
// it is.
func TestRateWindowPerPreset(t *testing.T) {
	f := newFakeAPI(t)
	k8s := Selector{Namespace: "tempo", Pod: "tempo-.*"}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Preset: "process-exporter", Selector: Selector{GroupName: "tempo"}}, "[20s]"},
		{Config{Preset: "self", Selector: Selector{Instance: "x"}}, "[20s]"},
		{Config{Preset: "kubernetes", Selector: k8s}, "[1m]"},
		{Config{Preset: "kubernetes", Selector: k8s, Step: time.Minute}, "[1m5s]"}, // step + scrape interval,
		{Config{Preset: "kubernetes", Selector: k8s, RateWindow: 30 * time.Second}, "[30s]"},
	} {
		c.cfg.Name, c.cfg.URL = "x", f.srv.URL
		s, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Resolve(context.Background())
		if q := s.queries[0].expr; !strings.Contains(q, c.want) {
			t.Errorf("%s (step %v, rate window %v): %s, want a range of %s", c.cfg.Preset, c.cfg.Step, c.cfg.RateWindow, q, c.want)
		}
	}
}

func TestWithoutCaptureGroupOneComponent(t *testing.T) {
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(0.5, "pod", "db-0"), constant(0.25, "pod", "db-1")}
	f.answers["container_memory_working_set_bytes"] = []fakeSeries{constant(1, "pod", "db-0"), constant(2, "pod", "db-1")}
	s := kubernetesSource(t, f, func(c *Config) { c.Name, c.Selector.Pod, c.Selector.Container = "db", "db-.*", "" })
	if s.Splits() {
		t.Fatal("a regex without a capture group must not split")
	}
	res := queryWindow(t, s)
	checkAll(t, res, "db", observe.CgroupCPUCores, 0.75)
	checkAll(t, res, "db", observe.WorkingSetBytes, 3)
	if q := f.queries[0].query; !strings.Contains(q, `container!="", container!="POD"`) {
		t.Errorf("without a container the query must leave out the pod's cgroup and pause container: %s", q)
	}
}

func TestQueryIsStepAlignedWithMargin(t *testing.T) {
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(1, "pod", "tempo-ingester-0")}
	s := kubernetesSource(t, f, nil)
	if _, err := s.Query(context.Background(), winStart.Add(1300*time.Millisecond), winEnd.Add(700*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	q := f.queries[0]
	wantStart, wantEnd := float64(winStart.Add(-5*time.Second).Unix()), float64(winEnd.Add(10*time.Second).Unix())
	if q.start != wantStart || q.end != wantEnd || q.step != 5 {
		t.Errorf("query_range start %v end %v step %v, want %v %v 5 (one step of margin, aligned to the step)",
			q.start, q.end, q.step, wantStart, wantEnd)
	}
}

func TestLongWindowIsQueriedInParts(t *testing.T) {
	f := newFakeAPI(t)
	f.answers["container_cpu_usage_seconds_total"] = []fakeSeries{constant(1, "pod", "tempo-ingester-0")}
	s := kubernetesSource(t, f, func(c *Config) { c.Step = time.Second })
	end := winStart.Add(25_000 * time.Second)
	res, err := s.Query(context.Background(), winStart, end)
	if err != nil {
		t.Fatal(err)
	}
	var parts int
	for _, q := range f.queries {
		if strings.Contains(q.query, "container_cpu_usage_seconds_total") {
			parts++
			if n := (q.end-q.start)/q.step + 1; n > maxPoints {
				t.Errorf("a part of %g steps, more than %d", n, maxPoints)
			}
		}
	}
	if parts != 3 {
		t.Errorf("%d parts, want 3 for 25,003 steps", parts)
	}
	if n := len(inWindow(res.Series["tempo-ingester"][observe.CgroupCPUCores], winStart, end)); n != 25_001 {
		t.Errorf("%d points in the window, want 25001 (each step once)", n)
	}
}

func TestResolveStep(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		plan         time.Duration
		want         time.Duration
		note         string
	}{
		{"from the configuration", "global:\n  scrape_interval: 5s\n", 0, 5 * time.Second, "/api/v1/status/config"},
		{"prometheus' default", "global:\n  evaluation_interval: 5s\n", 0, time.Minute, "/api/v1/status/config"},
		{"no configuration endpoint", "", 0, DefaultStep, "the default"},
		{"the plan's", "global:\n  scrape_interval: 5s\n", 2 * time.Second, 2 * time.Second, "set by the plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.config = tc.config
			s, err := New(Config{Name: "x", URL: f.srv.URL, Preset: "self", Selector: Selector{Instance: "a:1"}, Step: tc.plan})
			if err != nil {
				t.Fatal(err)
			}
			note := s.Resolve(context.Background())
			if s.Step() != tc.want || !strings.Contains(note, tc.note) {
				t.Errorf("step %v (%q), want %v and a note naming %q", s.Step(), note, tc.want, tc.note)
			}
		})
	}
}

func TestCredentialsAreSent(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{BearerToken: "s3cret"}, "Bearer s3cret"},
		{Config{Username: "u", Password: "p"}, "Basic dTpw"},
		{Config{}, ""},
	} {
		f := newFakeAPI(t)
		cfg := tc.cfg
		cfg.Name, cfg.URL, cfg.Preset, cfg.Selector = "x", f.srv.URL, "self", Selector{Instance: "a:1"}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Resolve(context.Background())
		queryWindow(t, s)
		for _, got := range f.auth {
			if got != tc.want {
				t.Fatalf("Authorization %q, want %q", got, tc.want)
			}
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{URL: "http://127.0.0.1:1", Preset: "kubelet"},
		{URL: "http://127.0.0.1:1"},
		{URL: "http://127.0.0.1:1", Queries: map[string]string{"cpu_cores": "x"}, Split: Split{Label: "pod", Regex: "("}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestPlanKnowsEveryPreset checks that the plan validates exactly the
// presets this package has.
func TestPlanKnowsEveryPreset(t *testing.T) {
	for name := range Presets {
		if _, ok := plan.PresetSelectors[name]; !ok {
			t.Errorf("the plan does not know preset %s", name)
		}
	}
	for name := range plan.PresetSelectors {
		if _, ok := Presets[name]; !ok {
			t.Errorf("the plan knows preset %s, this package does not", name)
		}
	}
}
