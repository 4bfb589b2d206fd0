//go:build k8s && linux

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/results"
)

// What a real cluster does to a run: each is named to the user, with exit
// 1, what the other workers measured kept, and the run's objects gone.

// testK8sImageNotOnNode: the image is not on the node and may not be
// pulled (ErrImageNeverPull): the run fails before any load, naming the
// image.
func testK8sImageNotOnNode(t *testing.T, c *cluster) {
	plan := fixedPlan(t, startTarget(t), 50, 5)
	lc, _ := localCluster(t)
	id := runID("noimage")
	r := runCmd(t, c.k8sCmd(t, "run", plan, append(lc, "--workers", "2", "--cpu", "100m", "--run-id", id,
		"--image", "perflab:absent", "--start-timeout", "1m", "--out", t.TempDir())...))
	t.Logf("perflab said:\n%s", said(r.stderr))
	if last := verdict(r.stderr); r.code != cli.ExitFailed || !strings.Contains(last, "cannot start the workers: worker 0: pod ") ||
		!strings.Contains(last, `ErrImageNeverPull: Container image "perflab:absent" is not present`) {
		t.Errorf("exit %d, want 1 naming ErrImageNeverPull and the image:\n%s", r.code, r.stderr)
	}
	c.waitGone(t, runLabels(id))
}

// testK8sWorkerOOMKilled: worker 0 alone holds the one VU of a workload
// whose answers are ~50 MB (the mock provider's 8M tokens), over its 64Mi
// memory limit: the kernel kills it. The run fails naming it, OOMKilled
// and its limit; workers 1 and 2 make their whole shares of the other
// workload, kept in the run.
func testK8sWorkerOOMKilled(t *testing.T, c *cluster) {
	const rate, secs, workers = 60, 8, 3
	llm := startBuiltin(t, "llm", "--tokens", "8000000")
	plan := writePlan(t, fmt.Sprintf(`name: oom
profiles:
  - name: p
    duration: %ds
    workloads:
      - {name: big, driver: openai, model: closed, concurrency: 1, params: {url: %q, model: perflab-mock, prompts: [hi]}}
      - {name: get, driver: http, rate: %d/s, params: {url: "%s/v1/models"}}
`, secs, llm, rate, llm))
	lc, _ := localCluster(t)
	id := runID("oom")
	r := runCmd(t, c.k8sCmd(t, "run", plan, append(lc, "--workers", fmt.Sprint(workers), "--cpu", "200m", "--memory", "64Mi",
		"--run-id", id, "--out", t.TempDir())...))
	t.Logf("perflab said:\n%s", said(r.stderr))
	if last := verdict(r.stderr); r.code != cli.ExitFailed || !strings.Contains(last, "worker 0 (perflab-") ||
		!strings.Contains(last, "OOMKilled, exit 137: it needed more than its memory limit, 64Mi (--memory)") {
		t.Fatalf("exit %d, want 1 naming worker 0 OOMKilled over its 64Mi:\n%s", r.code, r.stderr)
	}
	rows := shardsOf(t, runDir(t, r.stderr))
	var gets int64
	for i, s := range rows {
		if i == 0 && s.State != results.ShardFailed {
			t.Errorf("worker 0: %+v, want failed", s)
		}
		if i > 0 && (s.State != results.ShardCompleted || s.Requests != share(rate*secs, i, workers)) {
			t.Errorf("worker %d: %+v, want completed with its %d requests", i, s, share(rate*secs, i, workers))
		}
		if i > 0 {
			gets += s.Requests
		}
	}
	if n := recorded(t, runDir(t, r.stderr), "p/get"); n < gets {
		t.Errorf("the run holds %d requests of get, workers 1 and 2 made %d", n, gets)
	}
	c.waitGone(t, runLabels(id))
	t.Logf("figures: workers 1 and 2 kept %d requests of get", gets)
}

// testK8sWorkerPodDeleted: worker 1's pod is deleted mid-run (kubectl
// delete pod): the run fails naming it and its deleted pod; it keeps what
// worker 1 measured before, and workers 0 and 2 make their whole shares.
func testK8sWorkerPodDeleted(t *testing.T, c *cluster) {
	const rate, secs, workers, victim = 150, 10, 3, 1
	plan := fixedPlan(t, startTarget(t), rate, secs)
	lc, store := localCluster(t)
	id := runID("delete")
	pods := c.watchPods(id)
	done := startCmd(t, c.k8sCmd(t, "run", plan, append(lc, "--workers", fmt.Sprint(workers), "--cpu", "200m", "--run-id", id,
		"--out", t.TempDir())...))
	waitPart(t, store, victim)
	pod := pods.pod(t, victim)
	pods.end()
	if err := c.Client.CoreV1().Pods("default").Delete(context.Background(), pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	t.Logf("perflab said:\n%s", said(r.stderr))
	if last := verdict(r.stderr); r.code != cli.ExitFailed || !strings.Contains(last, fmt.Sprintf("worker %d (%s", victim, pod)) ||
		!strings.Contains(last, "pod "+pod+" was deleted (not by perflab)") {
		t.Fatalf("exit %d, want 1 naming worker %d and its deleted pod %s:\n%s", r.code, victim, pod, r.stderr)
	}
	checkKept(t, r, rate*secs, workers, victim)
	c.waitGone(t, runLabels(id))
}

// testK8sJobDeadline: the Job's deadline (--deadline 15s) comes in the
// middle of a 60 s load: Kubernetes stops every pod; the run fails saying
// so, and keeps what the workers measured until then.
func testK8sJobDeadline(t *testing.T, c *cluster) {
	plan := fixedPlan(t, startTarget(t), 60, 60)
	lc, _ := localCluster(t)
	id := runID("deadline")
	r := runCmd(t, c.k8sCmd(t, "run", plan, append(lc, "--workers", "2", "--cpu", "200m", "--deadline", "15s", "--run-id", id,
		"--out", t.TempDir())...))
	t.Logf("perflab said:\n%s", said(r.stderr))
	if last := verdict(r.stderr); r.code != cli.ExitFailed || !strings.Contains(last, "the Job's deadline, 15s (--deadline), was reached") {
		t.Fatalf("exit %d, want 1 saying the Job's deadline was reached:\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	var total int64
	for i, s := range shardsOf(t, dir) {
		if s.State != results.ShardFailed || s.Requests == 0 || s.Requests >= share(60*60, i, 2) {
			t.Errorf("worker %d: %+v, want failed with part of its share", i, s)
		}
		total += s.Requests
	}
	if n := recorded(t, dir, "p/get"); n != total || n == 0 {
		t.Errorf("the run holds %d requests, the workers' rows %d", n, total)
	}
	c.waitGone(t, runLabels(id))
	t.Logf("figures: %d requests kept of the workers stopped at the deadline", total)
}

// testK8sInterrupted: Ctrl-C (SIGINT) at perflab k8s run mid-run stops
// the workers, writes the report of what they measured (exit 130), and
// deletes the Job, its pods, the ConfigMap and the ServiceAccount.
func testK8sInterrupted(t *testing.T, c *cluster) {
	plan := fixedPlan(t, startTarget(t), 60, 120)
	lc, store := localCluster(t)
	id := runID("sigint")
	cmd := c.k8sCmd(t, "run", plan, append(lc, "--workers", "2", "--cpu", "200m", "--run-id", id, "--out", t.TempDir())...)
	done := startCmd(t, cmd)
	waitPart(t, store, 0)
	waitPart(t, store, 1)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	t.Logf("perflab said:\n%s", said(r.stderr))
	if r.code != cli.ExitInterrupted || !strings.Contains(r.stderr, "deleted Job default/perflab-"+id) {
		t.Fatalf("exit %d, want %d saying it deleted the Job:\n%s", r.code, cli.ExitInterrupted, r.stderr)
	}
	for i, s := range shardsOf(t, runDir(t, r.stderr)) {
		if s.State != results.ShardInterrupted || s.Requests == 0 {
			t.Errorf("worker %d: %+v, want interrupted with what it measured", i, s)
		}
	}
	c.waitGone(t, runLabels(id))
}

// verdict is the line where perflab says at its end why the run failed.
func verdict(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "perflab: ") && strings.Contains(lines[i], " failed: ") {
			return lines[i]
		}
	}
	return ""
}

// checkKept checks the rows of a run whose worker victim failed mid-run:
// it kept part of its share, the others all of theirs, and the run holds
// them all.
func checkKept(t *testing.T, r result, total, workers, victim int) {
	t.Helper()
	dir := runDir(t, r.stderr)
	var sum int64
	for i, s := range shardsOf(t, dir) {
		sum += s.Requests
		switch {
		case i == victim && (s.State != results.ShardFailed || s.Requests == 0 || s.Requests >= share(total, i, workers)):
			t.Errorf("worker %d: %+v, want failed with part of its share", i, s)
		case i != victim && (s.State != results.ShardCompleted || s.Requests != share(total, i, workers)):
			t.Errorf("worker %d: %+v, want completed with its %d requests", i, s, share(total, i, workers))
		}
	}
	if n := recorded(t, dir, "p/get"); n != sum {
		t.Errorf("the run holds %d requests, the workers' rows %d", n, sum)
	}
	t.Logf("figures: %d requests kept, of %d planned", sum, total)
}

// startCmd starts cmd and returns its result when it ends.
func startCmd(t *testing.T, cmd *exec.Cmd) <-chan result {
	done := make(chan result, 1)
	go func() { done <- runCmd(t, cmd) }()
	return done
}

// runID is a run id of the test's, unique on the cluster.
func runID(what string) string { return fmt.Sprintf("e2e-%s-%d", what, time.Now().UnixNano()%1e9) }
