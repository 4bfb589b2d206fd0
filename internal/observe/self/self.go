// Package self samples the load generator itself, so that a report can tell
// when perflab, not the system under test, was the limit (the rule is
// analysis's: see internal/analysis/clientbound.go): its own process's CPU
// and memory, the CPUs it may run on, the machine's memory, and the Go
// scheduler's latency.
//
// Only perflab's own process is counted (proc.RootOnly): its children are
// the components it started, and the CPU time of a child it reaps would
// otherwise land on perflab's account. Each worker process of a distributed
// run samples itself.
package self

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/prometheus/procfs"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/cgroup"
	"github.com/perflab/perflab/internal/observe/proc"
)

// schedLatencies is the runtime's histogram of the time goroutines spent
// runnable before they ran.
const schedLatencies = "/sched/latencies:seconds"

// Self is a Source for the generator's own process.
type Self struct {
	tree   *proc.Tree
	fs     procfs.FS // for the machine's MemTotal
	sample []metrics.Sample
	prev   []uint64   // scheduler latency counts at the previous sample; nil before
	cpu    machineCPU // the machine's CPU times at the previous sample
}

// machineCPU is the machine's CPU times (/proc/stat), in seconds, when
// they were read.
type machineCPU struct {
	at          time.Time // zero before the first sample
	busy, steal float64
}

var _ observe.Source = (*Self)(nil)

// New returns a Self for the current process, read from the proc file
// system at procRoot ("" means /proc).
func New(procRoot string) (*Self, error) {
	tree, err := proc.New(procRoot, os.Getpid(), proc.RootOnly())
	if err != nil {
		return nil, fmt.Errorf("cannot observe perflab itself: %w", err)
	}
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("cannot observe perflab itself: %w", err)
	}
	return &Self{tree: tree, fs: fs, sample: []metrics.Sample{{Name: schedLatencies}}}, nil
}

// Name implements observe.Source.
func (s *Self) Name() string { return "self" }

// Sample implements observe.Source: the process points of proc.Tree (with
// RootOnly), CoresAvailable, MachineMemoryBytes (the machine's MemTotal,
// left out when /proc/meminfo can't be read), the whole machine's CPU
// (machine), and from the second sample on
// SchedLatP99Seconds, the 99th percentile of the scheduler latencies
// recorded since the previous sample (left out when there were none).
func (s *Self) Sample(ctx context.Context, now time.Time) ([]observe.Point, error) {
	points, err := s.tree.Sample(ctx, now)
	if err != nil {
		return nil, err
	}
	cores, err := CoresAvailable()
	if err != nil {
		return nil, err
	}
	points = append(points, observe.Point{Metric: observe.CoresAvailable, Value: cores})
	if mi, err := s.fs.Meminfo(); err == nil && mi.MemTotalBytes != nil {
		points = append(points, observe.Point{Metric: observe.MachineMemoryBytes, Value: float64(*mi.MemTotalBytes)})
	}
	points = append(points, s.machine()...)
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return points, nil // not in this Go version
	}
	h := s.sample[0].Value.Float64Histogram()
	if p99, ok := quantileSince(s.prev, h, 0.99); ok {
		points = append(points, observe.Point{Metric: observe.SchedLatP99Seconds, Value: p99})
	}
	s.prev = append(s.prev[:0], h.Counts...)
	return points, nil
}

// machine is the whole machine's CPU: its cores and runnable tasks, and
// from the second sample on its busy and stolen cores since the previous
// one; none when /proc/stat can't be read.
func (s *Self) machine() []observe.Point {
	st, err := s.fs.Stat()
	if err != nil || len(st.CPU) == 0 {
		return nil
	}
	t := st.CPUTotal
	// The time of the read, not of the sample: on a busy machine the read
	// comes late, and the counters are the read's.
	cur := machineCPU{at: time.Now(), busy: t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ, steal: t.Steal}
	points := []observe.Point{{Metric: observe.MachineCores, Value: float64(len(st.CPU))},
		{Metric: observe.MachineRunnable, Value: float64(st.ProcessesRunning)}}
	prev := s.cpu
	s.cpu = cur
	if dt := cur.at.Sub(prev.at).Seconds(); !prev.at.IsZero() && dt > 0 && cur.busy >= prev.busy && cur.steal >= prev.steal {
		// The counters move in ticks of 10 ms a CPU: over a short span
		// the busy cores may come out above the cores there are, which no
		// machine can be.
		busy := min((cur.busy-prev.busy)/dt, float64(len(st.CPU)))
		points = append(points, observe.Point{Metric: observe.MachineBusyCores, Value: busy},
			observe.Point{Metric: observe.MachineStealCores, Value: (cur.steal - prev.steal) / dt})
	}
	return points
}

// CoresAvailable returns how many cores the current process can keep
// busy: the CPUs of its scheduler affinity mask, fewer when GOMAXPROCS is
// lower (Go sets it from a cgroup's CPU limit, rounded up) or when its
// cgroup v2, or an ancestor, has a CPU quota (a container's CPU limit,
// which may be a fraction: 1.5).
func CoresAvailable() (float64, error) {
	return coresAvailable("/proc", cgroup.Root())
}

// CPULimit is the current process's cgroup CPU limit, in cores (v2's
// cpu.max or v1's cpu.cfs_quota_us / cpu.cfs_period_us, the smallest of
// its cgroup's and their ancestors'); false when it has none.
func CPULimit() (float64, bool) {
	return cgroup.CPULimit("/proc", "/", cgroup.Root(), os.Getpid())
}

func coresAvailable(procRoot, cgroupRoot string) (float64, error) {
	cpus, err := affinity()
	if err != nil {
		return 0, err
	}
	limit, limited := cgroup.CPULimit(procRoot, "/", cgroupRoot, os.Getpid())
	return cores(cpus, runtime.GOMAXPROCS(0), limit, limited), nil
}

// cores are the cores a process may use: the CPUs it may run on, its
// GOMAXPROCS and its cgroup's CPU limit, whichever is least. Since Go
// 1.25 GOMAXPROCS follows a cgroup limit but never goes below 2, so a
// 500m container's GOMAXPROCS is 2: the limit, not GOMAXPROCS, says 0.5.
func cores(affinity, gomaxprocs int, limit float64, limited bool) float64 {
	c := float64(min(affinity, gomaxprocs))
	if limited {
		c = min(c, limit)
	}
	return c
}

// quantileSince returns the q-quantile of the observations h gained since
// it had the counts prev, interpolated linearly within its bucket (the
// bound when the other one is infinite); false when prev is nil (the first
// sample) or nothing was observed since.
func quantileSince(prev []uint64, h *metrics.Float64Histogram, q float64) (float64, bool) {
	if prev == nil || len(prev) != len(h.Counts) {
		return 0, false
	}
	delta := make([]uint64, len(h.Counts))
	var total uint64
	for i, c := range h.Counts {
		if c >= prev[i] {
			delta[i] = c - prev[i]
			total += delta[i]
		}
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var cum float64
	for i, d := range delta {
		if d == 0 || cum+float64(d) < rank {
			cum += float64(d)
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		switch {
		case math.IsInf(hi, 1):
			return lo, true
		case math.IsInf(lo, -1):
			return hi, true
		}
		return lo + (hi-lo)*(rank-cum)/float64(d), true
	}
	return h.Buckets[len(h.Buckets)-1], true // not reached: rank <= total
}
