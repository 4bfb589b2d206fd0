//go:build k8s

package promapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/testutil"
)

// TestKubernetesPresetReadsRestartsAndOOMKills runs three pods of a
// program that waits 20 s, then writes memory: hog-oom writes 64 MiB under
// a 32 MiB limit and is OOM-killed, hog-crash exits 3, hog-steady writes 8
// MiB of its 64 and sleeps; all restart always. A real Prometheus scrapes
// kube-state-metrics (built from the module proxy by scripts/ksm-build.sh)
// and the kubelet at 1 s. Over a window from before the first termination
// to after the first restart of each, the preset's figures say: hog-oom
// restarted and its last termination was an OOM kill, hog-crash restarted
// and was not OOM-killed, hog-steady neither; the warnings name the two
// restarts and the OOM kill.
func TestKubernetesPresetReadsRestartsAndOOMKills(t *testing.T) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	k := startKube(ctx, t, k8sNamespace)
	ksm := k.c.StartKubeStateMetrics(t)
	image := k.staticImage(ctx, t, "github.com/perflab/perflab/internal/observe/promapi/testdata/memhog", "perflab.local/memhog:1")
	promURL := testutil.StartPrometheusScraping(t, k.kubeletScrape(ctx, t, time.Second,
		fmt.Sprintf("  - job_name: kube-state-metrics\n    static_configs: [{targets: [%q]}]\n", ksm)))
	for name, c := range map[string]struct {
		memory string
		args   []string
	}{
		"hog-oom":    {"32Mi", []string{"-touch", "64"}},
		"hog-crash":  {"64Mi", []string{"-exit", "3"}},
		"hog-steady": {"64Mi", []string{"-touch", "8"}},
	} {
		k.createPod(ctx, t, k.podSpec(name, image, corev1.RestartPolicyAlways, "100m", c.memory, append(c.args, "-wait", "20s")...), "running", running)
	}
	sel := fmt.Sprintf(`{namespace=%q, pod=~"hog-.*"}`, k8sNamespace)
	waitFor(t, promURL, "count(kube_pod_container_status_restarts_total"+sel+" == 0) == 3")
	from := time.Now()
	restarts := waitRestarts(ctx, t, k, map[string]string{"hog-oom": "OOMKilled", "hog-crash": "Error"})
	waitFor(t, promURL, fmt.Sprintf(`count(kube_pod_container_status_restarts_total{namespace=%q, pod=~"hog-(oom|crash)"} >= 1) == 2`, k8sNamespace))
	to := time.Now().Add(time.Second)
	waitFor(t, promURL, fmt.Sprintf("min(timestamp(up)) > %d", to.Add(2*time.Second).Unix()))

	src := realSource(t, Config{Name: "hog", URL: promURL, Preset: "kubernetes",
		Selector: Selector{Namespace: k8sNamespace, Pod: "hog-(oom|crash|steady)"}})
	res, err := src.Query(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for comp, want := range map[string]struct {
		restarted, oom bool
	}{"hog-oom": {true, true}, "hog-crash": {true, false}, "hog-steady": {false, false}} {
		first, last := endsOf(t, res, comp, observe.Restarts, from, to)
		oom := 0.0
		for _, p := range inWindow(res.Series[comp][observe.OOMKilled], from, to) {
			oom = max(oom, p.V)
		}
		t.Logf("%s: restarts %g → %g in the window (the API says %d), oom_killed %g", comp, first, last, restarts[comp], oom)
		if want.restarted != (first == 0 && last >= 1) || !want.restarted && last != 0 {
			t.Errorf("%s: restarts %g at the window's start, %g at its end; want it restarted: %v", comp, first, last, want.restarted)
		}
		if want.oom != (oom == 1) || !want.oom && oom != 0 {
			t.Errorf("%s: oom_killed %g, want OOM-killed: %v", comp, oom, want.oom)
		}
		note := "component " + comp + " restarted"
		if w := warningWith(res.Warnings, note); want.restarted != (w != "") || want.oom != strings.Contains(w, "OOMKilled") {
			t.Errorf("%s: warning %q, want one that says it restarted (%v) and was OOMKilled (%v); all: %q", comp, w, want.restarted, want.oom, res.Warnings)
		}
	}
	t.Logf("warnings: %q; test time %v", res.Warnings, time.Since(begin).Round(time.Second))
}

// waitRestarts waits until each pod of reasons restarted after a
// termination for its reason, and returns every pod's restart count the
// API gives then.
func waitRestarts(ctx context.Context, t *testing.T, k *kube, reasons map[string]string) map[string]int32 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods, err := k.c.Client.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		counts, done, states := map[string]int32{}, 0, []string{}
		for _, p := range pods.Items {
			states = append(states, p.Name+": "+podState(&p))
			if st := p.Status.ContainerStatuses; len(st) == 1 {
				counts[p.Name] = st[0].RestartCount
				if last := st[0].LastTerminationState.Terminated; last != nil && last.Reason == reasons[p.Name] && st[0].RestartCount >= 1 {
					done++
				}
			}
		}
		if done == len(reasons) {
			return counts
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every pod restarted as %v in 2 minutes: %s", reasons, strings.Join(states, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// endsOf is a component's first and last value of metric in the window.
func endsOf(t *testing.T, res *Result, comp, metric string, from, to time.Time) (first, last float64) {
	t.Helper()
	pts := inWindow(res.Series[comp][metric], from, to)
	if len(pts) == 0 {
		t.Fatalf("%s: no %s value in the window; components %v", comp, metric, sortedNames(res.Series))
	}
	return pts[0].V, pts[len(pts)-1].V
}

func warningWith(warns []string, s string) string {
	for _, w := range warns {
		if strings.Contains(w, s) {
			return w
		}
	}
	return ""
}
