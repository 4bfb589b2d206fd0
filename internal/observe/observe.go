// Package observe samples what the system under test spends: each source
// (process tree, cgroup, /metrics scrape, disk, the generator itself) turns
// one sample time into named points. The metric names below are the contract
// between the sources, the run store and the reports.
package observe

import (
	"context"
	"errors"
	"time"
)

// ErrGone is wrapped by a source whose subject no longer exists (the
// component's root process exited), so that callers can tell a crashed
// component from a failed measurement with errors.Is.
var ErrGone = errors.New("process is gone")

// Point is one measured value of a component at one sample time.
type Point struct {
	Metric string
	Value  float64
}

// Source is one thing that can be sampled. A source may keep state between
// calls (cumulative counters turned into rates); a rate metric is left out of
// the first sample, which has nothing to compare with.
type Source interface {
	// Name says what is sampled, for error messages ("proc 1234", "scrape http://…").
	Name() string
	Sample(ctx context.Context, now time.Time) ([]Point, error)
}

// Metrics of the process tree (the component's process and its descendants).
const (
	CPUCores       = "cpu_cores"         // CPU time per second of wall time
	RSSBytes       = "rss_bytes"         // resident set size, summed
	Threads        = "threads"           // OS threads, summed
	OpenFDs        = "open_fds"          // open file descriptors, summed
	ReadBytesPerS  = "read_bytes_per_s"  // storage reads (/proc/pid/io read_bytes)
	WriteBytesPerS = "write_bytes_per_s" // storage writes (/proc/pid/io write_bytes)
	Processes      = "processes"         // processes in the tree
)

// Metrics of a cgroup v2 directory.
const (
	CgroupMemoryBytes    = "cgroup_memory_bytes" // memory.current
	CgroupCPUCores       = "cgroup_cpu_cores"    // cpu.stat usage_usec per second
	CgroupThrottledPerS  = "cgroup_throttled_periods_per_s"
	CgroupThrottledCores = "cgroup_throttled_cores" // cpu.stat throttled_usec per second
)

// Metrics read from a component's own Prometheus /metrics.
const (
	GoHeapInuseBytes = "go_heap_inuse_bytes" // go_memstats_heap_inuse_bytes
	GCPerMin         = "gc_per_min"          // rate of go_gc_duration_seconds_count × 60
	ProcessCPUCores  = "process_cpu_cores"   // rate of process_cpu_seconds_total
	ProcessRSSBytes  = "process_rss_bytes"   // process_resident_memory_bytes
	GoGoroutines     = "go_goroutines"
	// MetricPrefix prefixes a metric the plan lists by name; its value is the
	// sum over the metric's series.
	MetricPrefix = "metric:"
	// CounterPrefix prefixes such a metric when it is a counter (TYPE
	// counter, or the count or sum of a summary or histogram): its raw
	// cumulative value, summed over its series; reports show its rate.
	CounterPrefix = "counter:"
)

// Metrics read from a Prometheus-compatible API (internal/observe/promapi)
// that local sources have no equivalent of.
const (
	WorkingSetBytes = "working_set_bytes" // a container's cgroup memory less inactive file pages (cAdvisor)
	MemoryUsedBytes = "memory_used_bytes" // a host's MemTotal − MemAvailable (node_exporter)
	Restarts        = "restarts"          // a container's restarts so far (kube-state-metrics)
	OOMKilled       = "oom_killed"        // containers whose last termination was OOMKilled (kube-state-metrics)
)

// DiskBytes is the space used under a component's data directories.
const DiskBytes = "disk_bytes"

// What the kernel counted of a component perflab held to a size's limits
// (perflab size --verify; sut.Confinement), sampled once as it stopped.
const (
	ConfinedCPULimit        = "confined_cpu_limit_cores"
	ConfinedMemoryLimit     = "confined_memory_limit_bytes"
	ConfinedPeriods         = "confined_periods"           // CFS periods in which it ran
	ConfinedThrottled       = "confined_throttled_periods" // of those, periods in which its quota ran out
	ConfinedStalledSeconds  = "confined_stalled_seconds"   // time its threads waited for the next period
	ConfinedMemoryPeakBytes = "confined_memory_peak_bytes" // absent when the kernel gives no peak
	ConfinedOOMKills        = "confined_oom_kills"
)

// Metrics of the generator itself (besides the process metrics above).
const (
	SchedLatP99Seconds = "go_sched_latency_p99_s" // Go scheduler latency p99 since the previous sample
	CoresAvailable     = "cores_available"        // CPUs the generator may run on
	MachineMemoryBytes = "machine_memory_bytes"   // the memory of the generator's machine (MemTotal of /proc/meminfo)
	// The whole machine's CPU (/proc/stat), every process's: what others
	// than perflab and its components took shows beside theirs.
	MachineCores      = "machine_cores"         // the CPUs /proc/stat counts
	MachineBusyCores  = "machine_busy_cores"    // user, nice, system, irq and softirq time, in cores
	MachineStealCores = "machine_steal_cores"   // time the hypervisor gave another guest, in cores
	MachineRunnable   = "machine_procs_running" // runnable tasks at the sample (procs_running)
)
