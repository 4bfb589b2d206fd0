package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Resizing a workload of the cluster to a size (perflab size --verify on
// Kubernetes): the size's requests and limits are applied to one
// container of a Deployment or StatefulSet by server-side apply, as field
// manager perflab (forced: the fields become perflab's), the rollout is
// awaited, and afterwards the container's resources as they were are
// applied again. What the kernel did to the container inside the limits
// is read from the kubelet's cAdvisor endpoint, through the API server
// (nodes/proxy): CFS periods, throttled periods and seconds, the memory
// high-water mark (cgroup v1), and from the pods' status, restarts and
// the reason of the last termination (OOMKilled).

// FieldManager is the server-side apply field manager of perflab's
// changes to a cluster's workloads.
const FieldManager = "perflab"

// WorkloadRef names a container of a Deployment or StatefulSet.
type WorkloadRef struct {
	Namespace, Kind, Name, Container string // Kind: "deployment" or "statefulset"
}

func (w WorkloadRef) String() string {
	s := fmt.Sprintf("%s/%s/%s", w.Namespace, w.Kind, w.Name)
	if w.Container != "" {
		s += ":" + w.Container
	}
	return s
}

// ParseWorkloadRef reads "[NAMESPACE/]deployment/NAME[:CONTAINER]" (or
// statefulset); the namespace defaults to "default", the container to the
// workload's only one.
func ParseWorkloadRef(s string) (WorkloadRef, error) {
	ref, container, _ := strings.Cut(s, ":")
	parts := strings.Split(ref, "/")
	w := WorkloadRef{Namespace: "default", Container: container}
	switch len(parts) {
	case 2:
		w.Kind, w.Name = parts[0], parts[1]
	case 3:
		w.Namespace, w.Kind, w.Name = parts[0], parts[1], parts[2]
	default:
		return w, fmt.Errorf("%q: want [NAMESPACE/]deployment/NAME[:CONTAINER] or statefulset", s)
	}
	w.Kind = strings.ToLower(w.Kind)
	if w.Kind != "deployment" && w.Kind != "statefulset" {
		return w, fmt.Errorf("%q: kind %q, want deployment or statefulset", s, parts[len(parts)-2])
	}
	if w.Name == "" || w.Namespace == "" {
		return w, fmt.Errorf("%q: want a namespace and a name", s)
	}
	return w, nil
}

// Resizer changes and reads workloads of one cluster.
type Resizer struct {
	apps, core *rest.RESTClient
	direct     *http.Client // the kubeconfig's credentials, for a kubelet the API server will not proxy to
}

// NewResizer is a Resizer of the cluster cfg describes.
func NewResizer(cfg *rest.Config) (*Resizer, error) {
	cs, err := restClients(cfg, []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme},
		corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	direct, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot make a Kubernetes client: %w", err)
	}
	return &Resizer{core: cs[0], apps: cs[1], direct: direct}, nil
}

// workload is a Deployment's or StatefulSet's parts a resize reads.
type workload struct {
	template   corev1.PodTemplateSpec
	selector   *metav1.LabelSelector
	rolledOut  bool
	generation int64
}

func (r *Resizer) get(ctx context.Context, w WorkloadRef) (workload, error) {
	var out workload
	switch w.Kind {
	case "deployment":
		var d appsv1.Deployment
		if err := r.apps.Get().Namespace(w.Namespace).Resource("deployments").Name(w.Name).Do(ctx).Into(&d); err != nil {
			return out, fmt.Errorf("cannot read %s: %w", w, err)
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		out = workload{template: d.Spec.Template, selector: d.Spec.Selector, generation: d.Generation,
			rolledOut: st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want}
	default:
		var s appsv1.StatefulSet
		if err := r.apps.Get().Namespace(w.Namespace).Resource("statefulsets").Name(w.Name).Do(ctx).Into(&s); err != nil {
			return out, fmt.Errorf("cannot read %s: %w", w, err)
		}
		want := int32(1)
		if s.Spec.Replicas != nil {
			want = *s.Spec.Replicas
		}
		st := s.Status
		out = workload{template: s.Spec.Template, selector: s.Spec.Selector, generation: s.Generation,
			rolledOut: st.ObservedGeneration >= s.Generation && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.CurrentRevision == st.UpdateRevision}
	}
	return out, nil
}

// container is w's container the ref names (its only one when the ref
// names none).
func (w WorkloadRef) container(t corev1.PodTemplateSpec) (corev1.Container, error) {
	cs := t.Spec.Containers
	if w.Container == "" && len(cs) == 1 {
		return cs[0], nil
	}
	var names []string
	for _, c := range cs {
		if c.Name == w.Container {
			return c, nil
		}
		names = append(names, c.Name)
	}
	if w.Container == "" {
		return corev1.Container{}, fmt.Errorf("%s has %d containers (%s): name one, %s:CONTAINER", w, len(cs), strings.Join(names, ", "), w)
	}
	return corev1.Container{}, fmt.Errorf("%s has no container %s (it has %s)", w, w.Container, strings.Join(names, ", "))
}

// Resources is w's container's resources as they are now, and the
// container's name.
func (r *Resizer) Resources(ctx context.Context, w WorkloadRef) (corev1.ResourceRequirements, string, error) {
	wl, err := r.get(ctx, w)
	if err != nil {
		return corev1.ResourceRequirements{}, "", err
	}
	c, err := w.container(wl.template)
	return c.Resources, c.Name, err
}

// Apply makes res the resources of w's container by server-side apply,
// forced, as FieldManager; with res empty, perflab's fields are given up
// (what it applied before goes, and what others own stays).
func (r *Resizer) Apply(ctx context.Context, w WorkloadRef, container string, res corev1.ResourceRequirements) error {
	c := map[string]any{"name": container}
	if len(res.Requests) > 0 || len(res.Limits) > 0 {
		c["resources"] = res
	}
	kind, resource := "Deployment", "deployments"
	if w.Kind == "statefulset" {
		kind, resource = "StatefulSet", "statefulsets"
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": w.Name, "namespace": w.Namespace},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{c}}}},
	})
	if err != nil {
		return err
	}
	err = r.apps.Patch(types.ApplyPatchType).Namespace(w.Namespace).Resource(resource).Name(w.Name).
		Param("fieldManager", FieldManager).Param("force", "true").Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("cannot apply the resources to %s: %w", w, err)
	}
	return nil
}

// WaitRollout waits until every replica of w runs its current template,
// or ctx ends; the error then says what its pods are doing. A pod of the
// current template whose container was OOM-killed, or that crash-loops,
// ends the wait at once: that rollout cannot complete.
func (r *Resizer) WaitRollout(ctx context.Context, w WorkloadRef) error {
	for i := 0; ; i++ {
		wl, err := r.get(ctx, w)
		if err == nil && wl.rolledOut {
			return nil
		}
		if err == nil && i%4 == 3 { // about once a second
			if why := r.crashing(ctx, w, wl); why != "" {
				return fmt.Errorf("%s cannot roll out: %s", w, why)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not roll out: %s", w, r.podStates(w, wl))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// crashing says which pods of w's current template (its container has
// the template's resources) had the container OOM-killed or crash-loop;
// "" when none.
func (r *Resizer) crashing(ctx context.Context, w WorkloadRef, wl workload) string {
	want, err := w.container(wl.template)
	if err != nil {
		return ""
	}
	pods, err := r.pods(ctx, w, wl)
	if err != nil {
		return ""
	}
	var out []string
	for _, p := range pods {
		if current(p, want) {
			out = append(out, crashed(p, want.Name)...)
		}
	}
	return strings.Join(out, "; ")
}

// crashed says how pod p's container named container was OOM-killed or
// crash-loops, if it was or does.
func crashed(p corev1.Pod, container string) []string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		last, now := cs.LastTerminationState.Terminated, cs.State.Terminated
		switch {
		case now != nil && now.Reason == "OOMKilled", last != nil && last.Reason == "OOMKilled":
			out = append(out, fmt.Sprintf("pod %s: %s was OOM-killed (%d restarts)", p.Name, cs.Name, cs.RestartCount))
		case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff":
			reason := "?"
			if last != nil {
				reason = last.Reason
			}
			out = append(out, fmt.Sprintf("pod %s: %s crash-loops (%d restarts, the last ended %s)", p.Name, cs.Name, cs.RestartCount, reason))
		}
	}
	return out
}

// current reports whether pod p runs container want as the template has
// it now: the same limits and the requests the template sets (the API
// server gives a pod's container without a request its limit).
func current(p corev1.Pod, want corev1.Container) bool {
	for _, c := range p.Spec.Containers {
		if c.Name != want.Name {
			continue
		}
		if len(c.Resources.Limits) != len(want.Resources.Limits) {
			return false
		}
		for name, q := range want.Resources.Limits {
			if got, ok := c.Resources.Limits[name]; !ok || got.Cmp(q) != 0 {
				return false
			}
		}
		for name, q := range want.Resources.Requests {
			if got, ok := c.Resources.Requests[name]; !ok || got.Cmp(q) != 0 {
				return false
			}
		}
		return true
	}
	return false
}

// podStates is what w's pods are doing, in words, for an error.
func (r *Resizer) podStates(w WorkloadRef, wl workload) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := r.pods(ctx, w, wl)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods {
		s := p.Name + " " + string(p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.LastTerminationState.Terminated; t != nil {
				s += fmt.Sprintf(", %s last ended %s (%d restarts)", cs.Name, t.Reason, cs.RestartCount)
			}
			if wt := cs.State.Waiting; wt != nil {
				s += fmt.Sprintf(", %s waiting: %s", cs.Name, wt.Reason)
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "no pods"
	}
	return strings.Join(out, "; ")
}

// pods are w's pods not being deleted.
func (r *Resizer) pods(ctx context.Context, w WorkloadRef, wl workload) ([]corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(wl.selector)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w, err)
	}
	var list corev1.PodList
	if err := r.core.Get().Namespace(w.Namespace).Resource("pods").Param("labelSelector", sel.String()).Do(ctx).Into(&list); err != nil {
		return nil, fmt.Errorf("cannot list the pods of %s: %w", w, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Evidence is what the kernel and the kubelet counted of a workload's
// container, summed over its pods: CFS periods, throttled periods and
// seconds, the memory high-water mark (-1 when cAdvisor gives none, as on
// cgroup v2), restarts and the last termination's reason.
type Evidence struct {
	Periods, Throttled uint64
	ThrottledSeconds   float64
	MemoryMax          int64
	Restarts           int32
	LastReason         string // e.g. OOMKilled; "" when none ended
	Pods               []string
	// At is when cAdvisor took the oldest of the figures (it samples a
	// container every few seconds, not when asked); zero when it gave
	// none of the container's.
	At time.Time
}

// Since is e's counters since before (the same pods).
func (e Evidence) Since(before Evidence) Evidence {
	e.Periods -= min(before.Periods, e.Periods)
	e.Throttled -= min(before.Throttled, e.Throttled)
	e.ThrottledSeconds -= min(before.ThrottledSeconds, e.ThrottledSeconds)
	e.Restarts -= min(before.Restarts, e.Restarts)
	if e.Restarts == 0 {
		e.LastReason = ""
	}
	return e
}

// EvidenceAfter reads w's container's figures once cAdvisor has sampled
// it at or after t (the end of a run), asking again every second while
// ctx lasts; figures without a time are taken as they come.
func (r *Resizer) EvidenceAfter(ctx context.Context, w WorkloadRef, container string, t time.Time) (Evidence, error) {
	for {
		ev, err := r.Evidence(ctx, w, container)
		if err != nil || ev.At.IsZero() || !ev.At.Before(t) {
			return ev, err
		}
		select {
		case <-ctx.Done():
			return ev, fmt.Errorf("the kubelet's cAdvisor figures of %s are of %v, before the run's end %v: %w", w, ev.At.Format(time.TimeOnly), t.Format(time.TimeOnly), ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// Evidence reads w's container's figures now.
func (r *Resizer) Evidence(ctx context.Context, w WorkloadRef, container string) (Evidence, error) {
	ev := Evidence{MemoryMax: -1}
	wl, err := r.get(ctx, w)
	if err != nil {
		return ev, err
	}
	pods, err := r.pods(ctx, w, wl)
	if err != nil {
		return ev, err
	}
	nodes := map[string]map[string]float64{} // node → cAdvisor series of the container, by pod and metric
	for _, p := range pods {
		ev.Pods = append(ev.Pods, p.Name)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != container {
				continue
			}
			ev.Restarts += cs.RestartCount
			if t := cs.LastTerminationState.Terminated; t != nil {
				ev.LastReason = t.Reason
			}
		}
		if p.Spec.NodeName == "" {
			continue
		}
		if _, ok := nodes[p.Spec.NodeName]; !ok {
			if nodes[p.Spec.NodeName], err = r.cadvisor(ctx, p.Spec.NodeName, w.Namespace, container); err != nil {
				return ev, err
			}
		}
		series := nodes[p.Spec.NodeName]
		if ms, ok := series[p.Name+"/at"]; ok && (ev.At.IsZero() || time.UnixMilli(int64(ms)).Before(ev.At)) {
			ev.At = time.UnixMilli(int64(ms))
		}
		ev.Periods += uint64(series[p.Name+"/container_cpu_cfs_periods_total"])
		ev.Throttled += uint64(series[p.Name+"/container_cpu_cfs_throttled_periods_total"])
		ev.ThrottledSeconds += series[p.Name+"/container_cpu_cfs_throttled_seconds_total"]
		if m, ok := series[p.Name+"/container_memory_max_usage_bytes"]; ok {
			ev.MemoryMax = max(ev.MemoryMax, 0) + int64(m)
		}
	}
	return ev, nil
}

// cadvisor reads the kubelet's cAdvisor figures of node, of container in
// namespace: by "POD/METRIC". It asks the API server to proxy to the
// kubelet (nodes/proxy), and, where the API server will not (a kubelet on
// a loopback address: "address not allowed"), the kubelet itself, with
// the kubeconfig's credentials.
func (r *Resizer) cadvisor(ctx context.Context, node, namespace, container string) (map[string]float64, error) {
	raw, err := r.core.Get().AbsPath("/api/v1/nodes", node, "proxy", "metrics", "cadvisor").DoRaw(ctx)
	if err != nil {
		var derr error
		if raw, derr = r.kubelet(ctx, node, "/metrics/cadvisor"); derr != nil {
			return nil, fmt.Errorf("cannot read the kubelet's cAdvisor figures of node %s: through the API server (nodes/proxy): %v; from the kubelet: %w", node, err, derr)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("cannot parse the cAdvisor figures of node %s: %w", node, err)
	}
	out := map[string]float64{}
	for _, name := range []string{"container_cpu_cfs_periods_total", "container_cpu_cfs_throttled_periods_total",
		"container_cpu_cfs_throttled_seconds_total", "container_memory_max_usage_bytes"} {
		mf, ok := families[name]
		if !ok {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] != namespace || labels["container"] != container {
				continue
			}
			if ts := float64(m.GetTimestampMs()); ts > 0 {
				key := labels["pod"] + "/at"
				if at, ok := out[key]; !ok || ts < at {
					out[key] = ts
				}
			}
			v := m.GetCounter().GetValue()
			if m.GetGauge() != nil {
				v = m.GetGauge().GetValue()
			} else if m.GetUntyped() != nil {
				v = m.GetUntyped().GetValue()
			}
			out[labels["pod"]+"/"+name] += v
		}
	}
	return out, nil
}

// kubelet GETs path of node's kubelet, at the address and port the node
// reports, with the kubeconfig's credentials and trust.
func (r *Resizer) kubelet(ctx context.Context, node, path string) ([]byte, error) {
	var n corev1.Node
	if err := r.core.Get().Resource("nodes").Name(node).Do(ctx).Into(&n); err != nil {
		return nil, err
	}
	host := ""
	for _, want := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalIP} {
		for _, a := range n.Status.Addresses {
			if a.Type == want && host == "" {
				host = a.Address
			}
		}
	}
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if host == "" || port == 0 {
		return nil, fmt.Errorf("node %s reports no address or kubelet port", node)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+net.JoinHostPort(host, strconv.Itoa(int(port)))+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.direct.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %.200s", resp.Status, body)
	}
	return body, err
}
