//go:build linux

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// A heavy sampler — a 1,000-line /metrics scraped every second — at
// 2 req/s, on a machine as busy as the tests leave it, does not make the
// run client-bound: the generator used a sliver of its cores and issued
// every arrival, whatever its scheduler lag (which the report still
// shows). A listed metric the endpoint does not expose is said.
func TestHeavySamplerAtALowRateIsNotClientBound(t *testing.T) {
	t.Parallel()
	nginx := testutil.RequireBinary(t, "nginx")
	port := testutil.FreePort(t)
	var metrics strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&metrics, "http_requests_total{handler=\"/api/v1/endpoint_%d\",code=\"200\"} %d\n", i, 1000+i)
	}
	component := nginxComponent(t, nginx, port, []byte(metrics.String()))
	path := writePlan(t, fmt.Sprintf(`
name: heavy-sampler
sample_interval: 1s
components:%[1]s    metric_names: [http_requests_total, http_requets_total]
profiles:
  - name: low
    duration: 6s
    workloads:
      - {name: get, driver: http, rate: 2/s, params: {url: "http://127.0.0.1:%[2]d/"}}
`, component, port))
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	type workload struct {
		Requests    int64    `json:"requests_total"`
		Unissued    *uint64  `json:"unissued"`
		ClientBound bool     `json:"client_bound"`
		Why         string   `json:"client_bound_reason"`
		Warnings    []string `json:"warnings"`
	}
	s, md, _ := readRunAs[struct {
		Workloads []workload `json:"workloads"`
		Cells     []planCell `json:"cells"`
	}](t, r)
	if len(s.Workloads) != 1 {
		t.Fatalf("%d workloads", len(s.Workloads))
	}
	w := s.Workloads[0]
	if w.ClientBound || w.Why != "" || strings.Contains(md, "client-bound:") || strings.Contains(r.stdout+r.stderr, "client-bound:") {
		t.Errorf("client-bound %v (%q) at 2 req/s; warnings %q", w.ClientBound, w.Why, w.Warnings)
	}
	if w.Unissued == nil || *w.Unissued != 0 || w.Requests != 12 {
		t.Errorf("%d requests, unissued %v; want 12 and 0", w.Requests, w.Unissued)
	}
	// a name the endpoint does not expose (misspelt) is said, not dropped
	if !strings.Contains(md, "metric_names lists http_requets_total, which its /metrics never exposed") || strings.Contains(md, "lists http_requests_total,") {
		t.Errorf("report.md does not say which listed metric was never exposed")
	}
	if !strings.Contains(md, "Scheduler lag (dispatch − intended start)") {
		t.Errorf("report.md does not show the scheduler lag")
	}
	scraped := 0 // the sampler did its work: the exposition's sum, every second
	for _, c := range s.Cells {
		for _, p := range c.Phases {
			if p.Resources == nil {
				continue
			}
			for _, comp := range p.Resources.Components {
				if st, ok := comp.Metrics["metric:http_requests_total"]; ok && st.Max == 1000*1000+999*1000/2 {
					scraped = st.Samples
				}
			}
		}
	}
	if scraped < 3 {
		t.Errorf("%d samples of the scraped metric in the window", scraped)
	}
}

// perflab http samples the generator as a plan's run does: without its
// CPU, the client-bound rule could only look at unissued arrivals, and a
// generator at the limit of its cores passed for a slow target.
func TestHTTPCommandWatchesTheGenerator(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "1ms")
	r := run(t, "http", url, "--rate", "50/s", "--duration", "3s", "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, _, _ := readRunAs[struct {
		Cells []struct {
			Phases []struct {
				Resources *struct {
					Cores      float64 `json:"cores_available"`
					Components []struct {
						Kind string `json:"kind"`
						CPU  *stat  `json:"cpu_cores"`
					} `json:"components"`
				} `json:"resources"`
			} `json:"phases"`
		} `json:"cells"`
	}](t, r)
	if len(s.Cells) != 1 || len(s.Cells[0].Phases) != 1 || s.Cells[0].Phases[0].Resources == nil {
		t.Fatalf("no resources of the phase in summary.json: %+v", s.Cells)
	}
	res := s.Cells[0].Phases[0].Resources
	gen, p99 := 0, false // the rule takes the CPU's P99, which needs 10 samples
	for _, c := range res.Components {
		if c.Kind == "generator" && c.CPU != nil {
			gen, p99 = c.CPU.Samples, c.CPU.P99 != nil
		}
	}
	if !p99 || res.Cores < 1 {
		t.Errorf("generator CPU samples %d (a P99: %v), cores available %v: the client-bound rule has no CPU to judge", gen, p99, res.Cores)
	}
}
