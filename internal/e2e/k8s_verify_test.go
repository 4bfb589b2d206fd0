//go:build k8s && linux

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testK8sSizeVerify: perflab size --verify --k8s on a target that runs in
// the cluster (a Deployment of perflab target http, burning 1 ms of CPU a
// request), sized by a run that observed its process: the size applied to
// the Deployment's container holds, with the kubelet's CFS periods as
// evidence; the same size against the target made to burn 8 times the CPU
// (its Deployment changed, as a new release would) does not hold,
// throttled; the target made to hold 384 MiB does not hold either,
// OOM-killed; and after each, the container has its resources as they
// were, none.
func testK8sSizeVerify(t *testing.T, c *cluster) {
	target := c.deployTarget(t, "--cpu-work", "1ms")
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	name := "target-" + port
	plan := writePlan(t, fmt.Sprintf(`
name: k8s-verify
sample_interval: 250ms
components:
  - name: api
    attach: {process: "target http --addr 127.0.0.1:%[1]s"}
profiles:
  - name: small
    duration: 8s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "%[2]s"}}
`, port, target))
	r := run(t, "run", plan, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	verify := func() (result, verifiedSummary) {
		t.Helper()
		v := run(t, "size", dir, "--verify", "--verify-duration", "6s", "--kubeconfig", c.Kubeconfig,
			"--k8s", "api=default/deployment/"+name+":target", "--rollout-timeout", "2m")
		s := verifiedOf(t, dir, v)
		c.wantNoResources(t, name)
		return v, s
	}

	v, s := verify()
	got := s.Cells[0].Insights.Sizes[0].Verified
	switch {
	case got.Inconclusive: // the run fell short with no limit binding: the machine's doing, said so
		t.Logf("the machine was too busy to verify the size that holds: %q", got.Reasons)
		if v.code != 1 || !strings.Contains(v.stderr, "could not be verified") {
			t.Errorf("not verified: exit %d\n%s", v.code, v.stderr)
		}
	case v.code != 0 || !got.Holds || len(got.Evidence) != 1 || got.Evidence[0].Component != "api" || got.Evidence[0].Periods == 0:
		t.Errorf("the run's own size in the cluster: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}

	c.setArgs(t, name, "--cpu-work", "8ms")
	v, s = verify()
	got = s.Cells[0].Insights.Sizes[0].Verified
	busy := strings.Contains(strings.Join(got.Reasons, "\n"), "the machine was busy with other work")
	switch {
	case got.Inconclusive && busy:
		t.Logf("the machine was too busy to tell 8 times the CPU per request from the machine: %q", got.Reasons)
	case v.code != 1 || got.Holds || got.Inconclusive || len(got.Evidence) != 1 || got.Evidence[0].ThrottledShare < 0.3:
		t.Errorf("8 times the CPU per request in the cluster: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}
	t.Logf("verdicts: %s", v.stdout)

	// the target made to hold 384 MiB, far past the size's memory limit
	// (a few tens of MiB): its pod is OOM-killed as it starts, so the
	// size cannot roll out, and the wait for it ends at the kill
	c.setArgs(t, name, "--cpu-work", "1ms", "--resident", "384MiB")
	v, s = verify()
	got = s.Cells[0].Insights.Sizes[0].Verified
	if why := strings.Join(got.Reasons, "\n"); v.code != 1 || got.Holds || got.Inconclusive || !strings.Contains(why, "OOM-killed") {
		t.Errorf("384 MiB resident in the cluster: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}
	t.Logf("verdicts: %s", v.stdout)
}

// wantNoResources fails the test unless the Deployment's container has no
// requests or limits: what it had before perflab resized it.
func (c *cluster) wantNoResources(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Client.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res := d.Spec.Template.Spec.Containers[0].Resources; len(res.Requests) > 0 || len(res.Limits) > 0 {
		t.Errorf("the Deployment's container kept resources %+v after perflab size --verify: want them put back (none)", res)
	}
}

// setArgs gives the Deployment's target more arguments, as a new release
// would, and waits until its new pod answers.
func (c *cluster) setArgs(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := c.Client.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Args = append(d.Spec.Template.Spec.Containers[0].Args, args...)
	if _, err := c.Client.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := c.Client.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && got.Status.ObservedGeneration >= got.Generation && got.Status.UpdatedReplicas == 1 && got.Status.AvailableReplicas == 1 && got.Status.Replicas == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Deployment %s did not roll out: %s", name, c.podStates(map[string]string{"app": name}))
		case <-time.After(k8sPoll):
		}
	}
}
