package promapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/testutil"
)

// The fixture: 30 minutes of cAdvisor and kube-state-metrics series at
// 15 s from fixtureBase (a multiple of 15 s and of 1 min), for three pods
// of Tempo (two ingesters, one distributor) with a sidecar each, the pods'
// own cgroups and pause containers, a pod of the same name in another
// namespace, and ingester-0's container once more as the kubelet's
// /metrics/resource serves it, none of which may count.
var fixtureBase = time.Unix(1699999200, 0) // 2023-11-14 21:20:00 UTC

const (
	fixtureSteps = 121 // 0 … 30 min
	mib          = 1 << 20
)

// series is one fixture series: its labels and its value at step i.
type series struct {
	labels string
	value  func(i int) float64
}

// cpu is a CPU counter growing at cores per second from 0.
func cpu(labels string, cores float64) series {
	return series{labels, func(i int) float64 { return cores * 15 * float64(i) }}
}

func gaugeOf(labels string, v func(i int) float64) series { return series{labels, v} }

func constantOf(v float64) func(int) float64 { return func(int) float64 { return v } }

// after is 0 before step 60 (minute 15) and 1 from it on.
func after(i int) float64 {
	if i >= 60 {
		return 1
	}
	return 0
}

func fixtureFamilies() map[string][]series {
	pod := func(p, c string) string { return fmt.Sprintf(`namespace="tempo",pod="%s",container="%s"`, p, c) }
	const resource = `,job="kubelet-resource"` // the same container's series from /metrics/resource
	return map[string][]series{
		"container_cpu_usage_seconds": {
			cpu(pod("tempo-ingester-0", "tempo"), 0.5),
			cpu(pod("tempo-ingester-1", "tempo"), 0.25),
			// the distributor's container restarted at minute 15: its counter starts again from 0
			{pod("tempo-distributor-7d9f-xk2", "tempo"), func(i int) float64 { return 0.1 * 15 * float64(i-60*int(after(i))) }},
			cpu(pod("tempo-ingester-0", "jaeger-agent"), 0.05),
			cpu(pod("tempo-ingester-0", ""), 0.55), // the pod's cgroup: its containers summed
			cpu(pod("tempo-ingester-0", "POD"), 0.001),
			cpu(`namespace="other",pod="tempo-ingester-0",container="tempo"`, 3),
			cpu(pod("tempo-ingester-0", "tempo")+resource, 0.5),
		},
		"container_memory_working_set_bytes": {
			gaugeOf(pod("tempo-ingester-0", "tempo"), func(i int) float64 { return float64(100*mib + i*mib) }),
			gaugeOf(pod("tempo-ingester-0", "tempo")+resource, func(i int) float64 { return float64(100*mib + i*mib) }),
			gaugeOf(pod("tempo-ingester-1", "tempo"), constantOf(50*mib)),
			gaugeOf(pod("tempo-distributor-7d9f-xk2", "tempo"), constantOf(10*mib)),
			gaugeOf(pod("tempo-ingester-0", "jaeger-agent"), constantOf(20*mib)),
			gaugeOf(pod("tempo-ingester-0", ""), constantOf(999*mib)),
			gaugeOf(`namespace="other",pod="tempo-ingester-0",container="tempo"`, constantOf(1<<30)),
		},
		"kube_pod_container_status_restarts": {gaugeOf(pod("tempo-ingester-1", "tempo"), after)},
		"kube_pod_container_status_last_terminated_reason": {
			gaugeOf(pod("tempo-ingester-1", "tempo")+`,reason="OOMKilled"`, after)},
	}
}

// writeFixture writes the fixture as OpenMetrics, the input of promtool
// tsdb create-blocks-from openmetrics.
func writeFixture(t *testing.T) string {
	var b strings.Builder
	for name, ss := range fixtureFamilies() {
		kind, sample := "gauge", name
		if strings.HasSuffix(name, "_seconds") || strings.HasSuffix(name, "_restarts") {
			kind, sample = "counter", name+"_total"
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", name, kind)
		for _, s := range ss {
			for i := range fixtureSteps {
				fmt.Fprintf(&b, "%s{%s} %g %d\n", sample, s.labels, s.value(i), fixtureBase.Unix()+15*int64(i))
			}
		}
	}
	b.WriteString("# EOF\n")
	path := filepath.Join(t.TempDir(), "cadvisor.om")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubernetesPresetOnCAdvisorFixture loads the fixture into a real
// Prometheus through promtool and reads minutes 10 to 20 with the
// kubernetes preset, checking the components against values computed by
// hand from the fixture:
//
//   - tempo-ingester CPU: 0.5 + 0.25 = 0.75 cores at every step (the
//     sidecar, the pod's cgroup, the pause container and the other
//     namespace's pod left out, ingester-0's container counted once). tempo-distributor 0.1 cores, but its
//     counter reads 0 at minute 15 (step 60): the 15 s since its last
//     scrape are lost. The three steps whose 1-minute rate window holds
//     that reset (60, 61, 62) see the samples of 45 s with two increases
//     of 1.5 s: 3/45 = 0.0667 cores. So 0.1 first and max, and on average
//     (38 × 0.1 + 3 × 3/45) / 41 = 4/41 = 0.09756 cores.
//   - tempo-ingester working set: ingester-0 at step i has 100 + i MiB,
//     ingester-1 50 MiB: 150 + i MiB, i = 40 … 80 in the window, so
//     190 MiB first, 230 MiB max, 210 MiB on average; tempo-distributor
//     10 MiB.
//   - warnings: ingester-1 restarted once (OOMKilled), the distributor's
//     CPU counter was reset once.
func TestKubernetesPresetOnCAdvisorFixture(t *testing.T) {
	data := testutil.PromtoolCreateBlocks(t, writeFixture(t))
	url := testutil.StartPrometheusOnData(t, data)
	from, to := fixtureBase.Add(10*time.Minute), fixtureBase.Add(20*time.Minute)
	s := realKubernetes(t, url, "tempo")
	res, err := s.Query(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	ing, dist := res.Series["tempo-ingester"], res.Series["tempo-distributor"]
	if len(res.Series) != 2 || ing == nil || dist == nil {
		t.Fatalf("components %v, want tempo-ingester and tempo-distributor", sortedNames(res.Series))
	}
	for _, c := range []struct {
		what      string
		pts       []Point
		first     float64
		max, avg  float64
		tolerance float64
	}{
		{"tempo-ingester CPU", ing[observe.CgroupCPUCores], 0.75, 0.75, 0.75, 1e-9},
		{"tempo-distributor CPU", dist[observe.CgroupCPUCores], 0.1, 0.1, 4.0 / 41, 1e-9},
		{"tempo-ingester working set", ing[observe.WorkingSetBytes], 190 * mib, 230 * mib, 210 * mib, 0},
		{"tempo-distributor working set", dist[observe.WorkingSetBytes], 10 * mib, 10 * mib, 10 * mib, 0},
	} {
		pts := inWindow(c.pts, from, to)
		if len(pts) != 41 {
			t.Fatalf("%s: %d values in the window, want 41 (every 15 s over 10 min)", c.what, len(pts))
		}
		var sum, hi float64
		for _, p := range pts {
			sum, hi = sum+p.V, max(hi, p.V)
		}
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"first", pts[0].V, c.first}, {"max", hi, c.max}, {"avg", sum / 41, c.avg}} {
			if d := x.got - x.want; d > c.tolerance*x.want || d < -c.tolerance*x.want {
				t.Errorf("%s %s = %.12g, want %.12g", c.what, x.name, x.got, x.want)
			}
		}
	}
	checkEveryContainer(t, url, from, to)
	wantWarnings(t, res.Warnings, []string{
		"component tempo-ingester restarted 1 times in the window (the last termination of one of its containers was OOMKilled)",
		`counter container_cpu_usage_seconds_total{namespace="tempo", pod=~"tempo-(ingester|distributor)-.*", container="tempo"} of component tempo-distributor was reset 1 times`,
	})
}

// checkEveryContainer reads the ingesters without a container: their
// sidecar counts (0.05 cores, 20 MiB), their pods' cgroups and pause
// containers do not: 0.8 cores, 170 + i MiB, so 230 MiB on average.
func checkEveryContainer(t *testing.T, url string, from, to time.Time) {
	t.Helper()
	res, err := realKubernetes(t, url, "").Query(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	cpu := avgIn(res.Series["tempo-ingester"][observe.CgroupCPUCores], from, to)
	mem := avgIn(res.Series["tempo-ingester"][observe.WorkingSetBytes], from, to)
	if cpu < 0.8-1e-9 || cpu > 0.8+1e-9 || mem != 230*mib {
		t.Errorf("every container of the ingesters: %.12g cores, %g MiB on average; want 0.8 and 230", cpu, mem/mib)
	}
}

func realKubernetes(t *testing.T, url, container string) *Source {
	t.Helper()
	s, err := New(Config{Name: "tempo", URL: url, Preset: "kubernetes",
		Selector: Selector{Namespace: "tempo", Pod: "tempo-(ingester|distributor)-.*", Container: container}})
	if err != nil {
		t.Fatal(err)
	}
	if note := s.Resolve(context.Background()); s.Step() != 15*time.Second {
		t.Fatalf("step %v (%s), want the 15s scrape interval of the configuration", s.Step(), note)
	}
	return s
}

// wantWarnings checks that warns are exactly one containing each of want.
func wantWarnings(t *testing.T, warns, want []string) {
	t.Helper()
	if len(warns) != len(want) {
		t.Errorf("warnings %q, want %d", warns, len(want))
	}
	for _, w := range want {
		found := false
		for _, got := range warns {
			found = found || strings.Contains(got, w)
		}
		if !found {
			t.Errorf("no warning says %q: %q", w, warns)
		}
	}
}
