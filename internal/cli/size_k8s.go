package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/k8s"
)

// perflab size --verify on Kubernetes: a component of the size that runs
// in a cluster (--k8s COMPONENT=[NS/]deployment/NAME[:CONTAINER]) is held
// to the size's requests and limits by applying them to its container
// (k8s.Resizer: server-side apply as perflab, the rollout awaited) for the
// confined run, and its resources as they were are applied again after
// it, whatever ended it (a failure, Ctrl-C). What the kubelet counted of
// the container over the run (throttled periods, restarts, OOM kills) is
// the component's evidence, as the kernel's is for a component perflab
// starts.

// k8sResize is one --k8s mapping: a component of the plan and the
// workload it runs as.
type k8sResize struct {
	component string
	ref       k8s.WorkloadRef
}

// resizeFlags are the Kubernetes settings of perflab size --verify.
type resizeFlags struct {
	resize              listFlag
	kubeconfig, context string
	rollout             time.Duration
}

// parse reads the --k8s mappings.
func (f resizeFlags) parse() ([]k8sResize, []string) {
	var out []k8sResize
	var problems []string
	for _, m := range f.resize {
		comp, ref, ok := strings.Cut(m, "=")
		if !ok || comp == "" {
			problems = append(problems, fmt.Sprintf("--k8s %q: want COMPONENT=[NAMESPACE/]deployment/NAME[:CONTAINER]", m))
			continue
		}
		w, err := k8s.ParseWorkloadRef(ref)
		if err != nil {
			problems = append(problems, "--k8s "+err.Error())
			continue
		}
		out = append(out, k8sResize{component: comp, ref: w})
	}
	if f.rollout <= 0 {
		problems = append(problems, fmt.Sprintf("--rollout-timeout %v: want a positive duration like 5m", f.rollout))
	}
	return out, problems
}

// resizer is a Resizer of the cluster the flags name.
func (f verifyFlags) resizer() (*k8s.Resizer, error) {
	cfg, err := restConfig(f.kubeconfig, f.kubeContext)
	if err != nil {
		return nil, err
	}
	return k8s.NewResizer(cfg)
}

// resized is the components of a size applied to their workloads: what
// to read of them after the run and how to put them back.
type resized struct {
	r       *k8s.Resizer
	items   []resizedOne
	timeout time.Duration
}

type resizedOne struct {
	k8sResize
	container string
	row       analysis.TShirtRow
	before    k8s.Evidence
	orig      corev1.ResourceRequirements
	applied   bool
}

// resizeK8s applies size t's rows to each mapped component's workload and
// waits for the rollouts. The returned resized puts everything back
// (restore), also when an error or a rollout that never completed ends
// it early: rolledOut is then false and why says what the pods did.
func (e *env) resizeK8s(ctx context.Context, f verifyFlags, t analysis.TShirt) (rs *resized, rolledOut bool, why string, err error) {
	rz, err := f.resizer()
	if err != nil {
		return nil, false, "", err
	}
	rs = &resized{r: rz, timeout: f.rollout}
	for _, m := range f.k8s {
		row, ok := sizeRow(t, m.component)
		if !ok {
			return rs, false, "", fmt.Errorf("--k8s %s: the size has no row for component %s", m.component, m.component)
		}
		orig, container, err := rz.Resources(ctx, m.ref)
		if err != nil {
			return rs, false, "", err
		}
		one := resizedOne{k8sResize: m, container: container, row: row, orig: orig}
		fmt.Fprintf(e.stderr, "size %s: %s gets %s (server-side apply, field manager %s)\n", t.Size, m.ref, resourcesText(k8sResources(row)), k8s.FieldManager)
		if err := rz.Apply(ctx, m.ref, container, k8sResources(row)); err != nil {
			return rs, false, "", err
		}
		one.applied = true
		rs.items = append(rs.items, one)
	}
	wctx, cancel := context.WithTimeout(ctx, f.rollout)
	defer cancel()
	for i := range rs.items {
		one := &rs.items[i]
		if err := rz.WaitRollout(wctx, one.ref); err != nil {
			if ctx.Err() != nil {
				return rs, false, "", ctx.Err()
			}
			return rs, false, err.Error(), nil
		}
		if one.before, err = rz.Evidence(ctx, one.ref, one.container); err != nil {
			return rs, false, "", err
		}
	}
	return rs, true, "", nil
}

// evidence is what the kubelet counted of each resized component since
// its rollout, as the verdict's evidence.
func (rs *resized) evidence(ctx context.Context) ([]analysis.Confined, error) {
	var out []analysis.Confined
	end := time.Now()
	for _, one := range rs.items {
		// cAdvisor samples every 10-15 s: figures of the run's end, not
		// of a sample taken during it
		wctx, cancel := context.WithTimeout(ctx, cadvisorWait)
		ev, err := rs.r.EvidenceAfter(wctx, one.ref, one.container, end)
		cancel()
		if err != nil {
			return nil, err
		}
		ev = ev.Since(one.before)
		c := analysis.Confined{Component: one.component, MemoryLimit: one.row.MemoryLimit, Periods: ev.Periods, Throttled: ev.Throttled,
			Stalled: time.Duration(ev.ThrottledSeconds * float64(time.Second)), MemoryPeak: ev.MemoryMax}
		if !one.row.NoCPULimit {
			c.CPULimit = one.row.CPULimit
		}
		switch {
		case ev.Restarts > 0 && ev.LastReason == "OOMKilled":
			c.OOMKills = 1 // the last restart's: pod status keeps no reason of those before
		case ev.Restarts > 0:
			c.Ended = fmt.Sprintf("restarted %d times (the last ended %s)", ev.Restarts, ev.LastReason)
		}
		out = append(out, c)
	}
	return out, nil
}

// cadvisorWait is how long the evidence may wait for the kubelet's
// cAdvisor to sample the container after the run: its housekeeping
// interval is 10 s by default, 15 s at most.
const cadvisorWait = 40 * time.Second

// notRolledOut is the verdict on a size whose resources never rolled out:
// it does not hold, and the pods' states say why (an OOM kill at start).
func (rs *resized) notRolledOut(t analysis.TShirt, why string) analysis.Verified {
	v := analysis.Verified{Size: t.Size, Load: t.Load, Reasons: []string{"the size's resources never rolled out: " + why}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if comps, err := rs.evidence(ctx); err == nil {
		for _, c := range comps {
			if c.OOMKills > 0 {
				v.Reasons = append(v.Reasons, fmt.Sprintf("component %s was OOM-killed (%d kills) under its %s memory limit", c.Component, c.OOMKills, c.MemoryLimit))
			}
			if c.OOMKills > 0 || c.Ended != "" {
				v.Components = append(v.Components, c) // the rest ran no load inside the size: no evidence
			}
		}
	}
	return v
}

// restore applies each workload's resources as they were and waits for
// the rollouts, on a context of its own: Ctrl-C, which ended the run,
// must not leave the cluster resized.
func (rs *resized) restore(stderr interface{ Write([]byte) (int, error) }) error {
	if rs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), rs.timeout)
	defer cancel()
	var errs []error
	for _, one := range rs.items {
		if !one.applied {
			continue
		}
		if err := rs.r.Apply(ctx, one.ref, one.container, one.orig); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := rs.r.WaitRollout(ctx, one.ref); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stderr, "%s has its resources back: %s\n", one.ref, resourcesText(one.orig))
	}
	return errors.Join(errs...)
}

// sizeRow is t's row of component.
func sizeRow(t analysis.TShirt, component string) (analysis.TShirtRow, bool) {
	for _, r := range t.Components {
		if r.Component == component {
			return r, true
		}
	}
	return analysis.TShirtRow{}, false
}

// k8sResources are a size row's requests and limits as a container's; a
// request above its limit (a limit search's scaled-down step) is the
// limit, as Kubernetes requires.
func k8sResources(r analysis.TShirtRow) corev1.ResourceRequirements {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	cpuReq, memReq := r.CPURequest.Amount, r.MemoryRequest.Amount
	if !r.NoCPULimit && !r.CPULimit.IsZero() {
		res.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.CPULimit.Amount, resource.DecimalSI)
		cpuReq = min(cpuReq, r.CPULimit.Amount)
	}
	if !r.MemoryLimit.IsZero() {
		res.Limits[corev1.ResourceMemory] = *resource.NewQuantity(r.MemoryLimit.Amount, resource.BinarySI)
		memReq = min(memReq, r.MemoryLimit.Amount)
	}
	if cpuReq > 0 {
		res.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpuReq, resource.DecimalSI)
	}
	if memReq > 0 {
		res.Requests[corev1.ResourceMemory] = *resource.NewQuantity(memReq, resource.BinarySI)
	}
	return res
}

// resourcesText is a container's resources in words.
func resourcesText(res corev1.ResourceRequirements) string {
	if len(res.Requests) == 0 && len(res.Limits) == 0 {
		return "none set"
	}
	var parts []string
	for _, x := range []struct {
		what string
		l    corev1.ResourceList
	}{{"requests", res.Requests}, {"limits", res.Limits}} {
		var kv []string
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := x.l[name]; ok {
				kv = append(kv, fmt.Sprintf("%s %s", name, q.String()))
			}
		}
		if len(kv) > 0 {
			parts = append(parts, x.what+" "+strings.Join(kv, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
