//go:build k8s

// The kubernetes preset against a real kubelet: run by `make test-k8s`
// (go test -tags k8s), not by `make test`.

package promapi

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/testutil"
)

const k8sNamespace = "perflab-cadvisor"

// TestKubernetesPresetAgreesWithProcOnRealCluster runs perflab's own
// target in a pod of a real cluster (each request burns 2 ms of CPU; 128
// MiB held resident), has a real Prometheus scrape the kubelet's
// /metrics/cadvisor and /metrics/resource at 1 s as a user's would (a
// ServiceAccount token allowed nodes/metrics, the kubelet's certificate
// checked), sends 200 requests/s for 50 s, samples the container's
// process through /proc as perflab does for a local component, and checks
// that the preset's figures over 20 s near the end agree: CPU within
// 10 %, memory within 10 %.
//
// Both are averages over the window. The preset's CPU at a step is a
// rate over a window before it of cAdvisor's samples: a moving average,
// whose P99 would measure the smoothing rather than the process. By
// default that window is a minute, for a kubelet's cAdvisor sampling
// every 10 to 15 s; the test cluster's samples every second, so the
// source's rate window is set to 20 s (rate_window, as a user with such a
// kubelet would), 20 samples, and the load lasts 50 s, not 95. /proc's
// CPU is averaged over the same 20 s before each of the preset's steps,
// then over the window (the load varies as the machine's other work
// takes the target's CPU, and the seconds before the window are not the
// window). The window starts 25 s into the load, so that every rate in
// it sees load only.
//
// Memory: the working set is what the container's cgroup is charged, less
// its inactive file pages; perflab's RSS is every resident page the
// process maps, the pages of its binary's text among them (~35 MiB of
// perflab). containerd read those into the page cache when it unpacked
// the image, so they are charged to containerd's cgroup, not the pod's.
// The working set is compared with perflab's RSS less the process's
// resident file pages (RssFile of /proc/PID/status), sampled with it.
func TestKubernetesPresetAgreesWithProcOnRealCluster(t *testing.T) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	k := startKube(ctx, t, k8sNamespace)
	image := k.perflabImage(ctx, t)
	addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	pod := k.createPod(ctx, t, k.podSpec("target", image, corev1.RestartPolicyAlways, "1", "512Mi",
		"target", "http", "--addr", addr, "--cpu-work", "2ms", "--resident", "128MiB"), "running", running)
	pid := hostPID(t, pod.Status.ContainerStatuses[0].ContainerID)
	promURL := testutil.StartPrometheusScraping(t, k.kubeletScrape(ctx, t, time.Second, ""))
	src := realSource(t, Config{Name: "target", URL: promURL, Preset: "kubernetes", RateWindow: 20 * time.Second,
		Selector: Selector{Namespace: k8sNamespace, Pod: "target"}})
	// both endpoints serve the container: the preset must count it once
	waitFor(t, promURL, fmt.Sprintf(`count(count by (job) (container_cpu_usage_seconds_total{namespace=%q, pod="target", container="target"})) == 2`, k8sNamespace))
	waitAnswers(t, "http://"+addr+"/")

	local := sampleLocally(t, map[string]int{"target": pid})
	files := sampleFileRSS(pid)
	start := time.Now()
	load(map[string]int{"http://" + addr + "/": 200}, 50*time.Second)
	from, to := start.Add(25*time.Second), start.Add(45*time.Second)
	localSeries, fileRSS := local.stop(), files.stop()
	waitFor(t, promURL, fmt.Sprintf("min(timestamp(up)) > %d", to.Add(2*time.Second).Unix()))

	res, err := src.Query(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	got := res.Series["target"]
	rss, file := avgOf(localSeries["target"][observe.RSSBytes], from, to), avgOf(fileRSS, from, to)
	cpu, procCPU := inWindow(got[observe.CgroupCPUCores], from, to), localSeries["target"][observe.CPUCores]
	agree(t, "CPU", avgIn(cpu, from, to), trailingAvg(procCPU, cpu, src.rateWindow()), 0.10)
	t.Logf("CPU: /proc's average over the window alone %.4g", avgOf(procCPU, from, to))
	agree(t, "memory", avgIn(got[observe.WorkingSetBytes], from, to), rss-file, 0.10)
	t.Logf("memory: perflab's RSS %.1f MiB, of which %.1f MiB resident file pages (the binary), working set %.1f MiB; test time %v",
		rss/mib, file/mib, avgIn(got[observe.WorkingSetBytes], from, to)/mib, time.Since(begin).Round(time.Second))
}

// trailingAvg is the average, over the steps of the preset's points, of
// the local samples in the window w before each step.
func trailingAvg(local []analysis.Point, steps []Point, w time.Duration) float64 {
	var avgs []float64
	for _, st := range steps {
		var in []float64
		for _, p := range local {
			if p.T.After(st.T.Add(-w)) && !p.T.After(st.T) {
				in = append(in, p.V)
			}
		}
		avgs = append(avgs, analysis.StatOf(in).Avg)
	}
	return analysis.StatOf(avgs).Avg
}

// waitAnswers waits until url answers, for a minute at most.
func waitAnswers(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fileRSS samples a process's resident file pages (RssFile of
// /proc/PID/status) every second, until stop.
type fileRSS struct {
	mu   sync.Mutex
	pts  []analysis.Point
	quit chan struct{}
	done chan struct{}
}

func sampleFileRSS(pid int) *fileRSS {
	f := &fileRSS{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-f.quit:
				return
			case now := <-tick.C:
				if v, ok := statusBytes(pid, "RssFile"); ok {
					f.mu.Lock()
					f.pts = append(f.pts, analysis.Point{T: now, V: v})
					f.mu.Unlock()
				}
			}
		}
	}()
	return f
}

func (f *fileRSS) stop() []analysis.Point {
	close(f.quit)
	<-f.done
	return f.pts
}

// statusBytes reads a "Name: N kB" field of /proc/PID/status.
func statusBytes(pid int, field string) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}
