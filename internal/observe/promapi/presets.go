package promapi

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe"
)

// Selector holds the parameters of the presets; each preset reads some.
type Selector struct {
	Namespace string // kubernetes: the pods' namespace
	Pod       string // kubernetes: regex of pod names; a capture group splits components
	Container string // kubernetes: the container; "" for every container of the pod
	GroupName string // process-exporter: regex of group names
	Instance  string // node-exporter, self: regex of the instance label
	Job       string // process-exporter, node-exporter, self: the job label; "" for any
}

// preset writes the queries of one kind of exporter.
type preset struct {
	split   func(Selector) Split
	queries func(sel Selector, rate string) []query
	// minRate is the shortest range its rate() may take, when the
	// exporter's samples change less often than they are scraped.
	minRate time.Duration
}

// cAdvisorRate is the shortest range of the kubernetes preset's rate():
// the kubelet's cAdvisor reads a container's cgroup every 10 to 15 s
// (its housekeeping interval) whatever the scrape interval, and stamps
// the samples with that time, at /metrics/cadvisor and /metrics/resource
// alike; a rate() needs two of them in its range. As Grafana's
// $__rate_interval takes 4 scrape intervals, this takes 4 of cAdvisor's.
const cAdvisorRate = 4 * 15 * time.Second

// Presets are the presets by name.
var Presets = map[string]preset{
	"kubernetes":       {split: func(s Selector) Split { return Split{"pod", s.Pod} }, queries: kubernetesQueries, minRate: cAdvisorRate},
	"process-exporter": {split: func(s Selector) Split { return Split{"groupname", s.GroupName} }, queries: processExporterQueries},
	"node-exporter":    {split: func(s Selector) Split { return Split{"instance", s.Instance} }, queries: nodeExporterQueries},
	"self":             {split: func(s Selector) Split { return Split{"instance", s.Instance} }, queries: selfQueries},
}

func presetNames() string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// matchers writes label matchers from triples (label, operator, value):
// "=" for exact values, "=~" for regexes (PromQL anchors them); empty values
// are left out.
func matchers(ms ...string) string {
	var out []string
	for i := 0; i+2 < len(ms); i += 3 {
		if ms[i+2] != "" {
			out = append(out, ms[i]+ms[i+1]+strconv.Quote(ms[i+2]))
		}
	}
	return strings.Join(out, ", ")
}

// sumBy is sum by (label) (expr).
func sumBy(label, expr string) string { return fmt.Sprintf("sum by (%s) (%s)", label, expr) }

// rateOf is sum by (label) (rate(counter[rate])), resets counted.
func rateOf(metric, label, counter, rate string, optional bool) query {
	return query{metric: metric, expr: sumBy(label, fmt.Sprintf("rate(%s[%s])", counter, rate)), counter: counter, optional: optional}
}

func gauge(metric, label, expr string, optional bool) query {
	return query{metric: metric, expr: sumBy(label, expr), optional: optional}
}

// kubernetesQueries reads cAdvisor's container CPU and working set and
// kube-state-metrics' restarts and OOM kills, per pod.
//
// The kubelet serves each container's CPU and working set twice, at
// /metrics/cadvisor (with cAdvisor's labels id, image, name) and at
// /metrics/resource (without): a Prometheus that scrapes both has two
// series of each container, and so has one that still holds the series
// of a container that restarted. Each container counts once, by the
// largest of its series (perContainer), before the pod's are summed.
func kubernetesQueries(s Selector, rate string) []query {
	ksm := matchers("namespace", "=", s.Namespace, "pod", "=~", s.Pod, "container", "=", s.Container)
	sel := ksm
	if s.Container == "" {
		sel += `, container!="", container!="POD"` // not the pod's own cgroup nor its pause container (docker's POD; containerd's has no container label)
	}
	cpu := "container_cpu_usage_seconds_total{" + sel + "}"
	return []query{
		{metric: observe.CgroupCPUCores, expr: sumBy("pod", perContainer(fmt.Sprintf("rate(%s[%s])", cpu, rate))), counter: cpu},
		gauge(observe.WorkingSetBytes, "pod", perContainer("container_memory_working_set_bytes{"+sel+"}"), false),
		gauge(observe.Restarts, "pod", "kube_pod_container_status_restarts_total{"+ksm+"}", true),
		oomKilled(ksm),
	}
}

// oomKilled is kube-state-metrics' count of containers whose last
// termination was an OOM kill; its series appear with the first.
func oomKilled(ksm string) query {
	q := gauge(observe.OOMKilled, "pod", `kube_pod_container_status_last_terminated_reason{`+ksm+`, reason="OOMKilled"}`, true)
	q.appears = true
	return q
}

// perContainer is the largest of each container's series.
func perContainer(expr string) string {
	return fmt.Sprintf("max by (namespace, pod, container) (%s)", expr)
}

// processExporterQueries reads ncabatoff/process-exporter's groups.
func processExporterQueries(s Selector, rate string) []query {
	sel := matchers("groupname", "=~", s.GroupName, "job", "=", s.Job)
	m := func(name string) string { return "namedprocess_namegroup_" + name + "{" + sel + "}" }
	return []query{
		rateOf(observe.CPUCores, "groupname", m("cpu_seconds_total"), rate, false),
		gauge(observe.RSSBytes, "groupname", "namedprocess_namegroup_memory_bytes{"+sel+`, memtype="resident"}`, false),
		gauge(observe.Threads, "groupname", m("num_threads"), true),
		gauge(observe.OpenFDs, "groupname", m("open_filedesc"), true),
		gauge(observe.Processes, "groupname", m("num_procs"), true),
		rateOf(observe.ReadBytesPerS, "groupname", m("read_bytes_total"), rate, true),
		rateOf(observe.WriteBytesPerS, "groupname", m("write_bytes_total"), rate, true),
	}
}

// nodeExporterQueries reads a host's busy CPU, used memory, disk I/O and
// the space used on its root file system.
func nodeExporterQueries(s Selector, rate string) []query {
	sel := matchers("instance", "=~", s.Instance, "job", "=", s.Job)
	fs := sel + `, mountpoint="/"`
	return []query{
		rateOf(observe.CPUCores, "instance", `node_cpu_seconds_total{`+sel+`, mode!~"idle|iowait|steal"}`, rate, false),
		gauge(observe.MemoryUsedBytes, "instance", "node_memory_MemTotal_bytes{"+sel+"} - node_memory_MemAvailable_bytes{"+sel+"}", false),
		rateOf(observe.ReadBytesPerS, "instance", "node_disk_read_bytes_total{"+sel+"}", rate, true),
		rateOf(observe.WriteBytesPerS, "instance", "node_disk_written_bytes_total{"+sel+"}", rate, true),
		gauge(observe.DiskBytes, "instance", "node_filesystem_size_bytes{"+fs+"} - node_filesystem_avail_bytes{"+fs+"}", true),
	}
}

// selfQueries reads the process_* and go_* metrics a component exports
// about itself, as Prometheus scraped them.
func selfQueries(s Selector, rate string) []query {
	sel := matchers("instance", "=~", s.Instance, "job", "=", s.Job)
	gc := rateOf(observe.GCPerMin, "instance", "go_gc_duration_seconds_count{"+sel+"}", rate, true)
	gc.expr += " * 60"
	return []query{
		rateOf(observe.ProcessCPUCores, "instance", "process_cpu_seconds_total{"+sel+"}", rate, false),
		gauge(observe.ProcessRSSBytes, "instance", "process_resident_memory_bytes{"+sel+"}", false),
		gauge(observe.GoHeapInuseBytes, "instance", "go_memstats_heap_inuse_bytes{"+sel+"}", true),
		gc,
		gauge(observe.GoGoroutines, "instance", "go_goroutines{"+sel+"}", true),
		gauge(observe.OpenFDs, "instance", "process_open_fds{"+sel+"}", true),
	}
}

// promDuration writes d as PromQL does: 1m30s, 15s, 500ms.
func promDuration(d time.Duration) string { return model.Duration(d).String() }
