//go:build unix

package self

import (
	"context"
	"math"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

func TestQuantileSince(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0.001, 0.002, 0.004, math.Inf(1)}
	prev := []uint64{5, 10, 10, 10}
	for _, tc := range []struct {
		name  string
		prev  []uint64
		delta []uint64
		want  float64
		ok    bool
	}{
		{"within a bucket", prev, []uint64{0, 100, 0, 0}, 0.001 + 0.001*99/100, true},
		{"at a bucket's top", prev, []uint64{0, 99, 1, 0}, 0.002, true},
		{"in the open last bucket", prev, []uint64{0, 90, 8, 2}, 0.004, true},
		{"in the open first bucket", prev, []uint64{100, 0, 0, 0}, 0.001, true},
		{"nothing new", prev, []uint64{0, 0, 0, 0}, 0, false},
		{"first sample", nil, []uint64{1, 1, 1, 1}, 0, false},
	} {
		cur := make([]uint64, 4)
		for i := range cur {
			if tc.prev != nil {
				cur[i] = tc.prev[i]
			}
			cur[i] += tc.delta[i]
		}
		got, ok := quantileSince(tc.prev, &metrics.Float64Histogram{Counts: cur, Buckets: buckets}, 0.99)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: p99 = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSelfOfThisProcess(t *testing.T) {
	// A child process, like a component perflab started, is not perflab.
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	s, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "self" {
		t.Errorf("Name = %q", s.Name())
	}
	// CPU to see, and goroutines that wait for a CPU: they spin until this
	// process has used 300 ms of CPU, however long a busy machine makes
	// that take, and the runtime has recorded some of their waits (it
	// records one transition in 8 of a goroutine: on a fast quiet machine
	// 300 ms of CPU once left none), and the sampler must report what
	// getrusage saw over the same wall time.
	cpu0, t0 := cpuTime(t), time.Now()
	if _, err := s.Sample(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	waits0 := schedWaits()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for x := 1; (cpuTime(t)-cpu0 < 300*time.Millisecond || schedWaits() < waits0+10) && time.Since(t0) < time.Minute; x++ {
				for range 100000 {
					x ^= x << 3
				}
			}
		})
	}
	wg.Wait()
	t1 := time.Now()
	points, err := s.Sample(context.Background(), t1)
	used := cpuTime(t) - cpu0
	if err != nil {
		t.Fatal(err)
	}
	wantCores := used.Seconds() / t1.Sub(t0).Seconds()
	t.Logf("%v", points)
	got := map[string]float64{}
	for _, p := range points {
		got[p.Metric] = p.Value
	}
	for _, c := range []struct {
		metric   string
		min, max float64
	}{
		{observe.Processes, 1, 1},
		{observe.CPUCores, wantCores * 0.8, wantCores * 1.2},
		{observe.RSSBytes, 1 << 20, 4 << 30},
		{observe.CoresAvailable, float64(runtime.NumCPU()), float64(runtime.NumCPU())},
		{observe.SchedLatP99Seconds, 0, 1},
		{observe.MachineMemoryBytes, 64 << 20, 1 << 50},
		// The machine's CPU holds this process's (and others').
		{observe.MachineCores, float64(runtime.NumCPU()), 4096},
		{observe.MachineBusyCores, wantCores * 0.8, got[observe.MachineCores] * 1.05},
		{observe.MachineStealCores, 0, got[observe.MachineCores]},
		{observe.MachineRunnable, 1, 1 << 20},
	} {
		if v, ok := got[c.metric]; !ok || v < c.min || v > c.max {
			t.Errorf("%s = %v (present %v), want within [%v, %v]", c.metric, v, ok, c.min, c.max)
		}
	}
	if _, ok := got[observe.ReadBytesPerS]; ok {
		t.Errorf("storage rates of perflab itself: %v", points)
	}
}

// A generator held to fewer cores than its affinity mask has (GOMAXPROCS,
// which Go sets from a container's CPU limit) counts those: else a
// generator at the limit of a 1-core container on a 16-core node never
// reached 90 % of 16 cores and was never client-bound.
func TestCoresAvailableHeedsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cores, err := CoresAvailable()
	if err != nil {
		t.Fatal(err)
	}
	if cores != 1 {
		t.Errorf("%v cores with GOMAXPROCS 1", cores)
	}
}

// TestCoresUnderALimit (issue 17): a worker pod limited to 500m on a
// 2-core node has GOMAXPROCS 2 (Go's floor) and 2 CPUs in its affinity:
// its cores are the limit's 0.5, so that a worker pegged at its limit is
// called client-bound; without a limit, the least of CPUs and GOMAXPROCS.
func TestCoresUnderALimit(t *testing.T) {
	for _, c := range []struct {
		affinity, gomaxprocs int
		limit                float64
		limited              bool
		want                 float64
	}{
		{2, 2, 0.5, true, 0.5},
		{2, 2, 0, false, 2},
		{8, 4, 6, true, 4},
		{2, 8, 0, false, 2},
	} {
		if got := cores(c.affinity, c.gomaxprocs, c.limit, c.limited); got != c.want {
			t.Errorf("cores(%d, %d, %v, %v) = %v, want %v", c.affinity, c.gomaxprocs, c.limit, c.limited, got, c.want)
		}
	}
}

// cpuTime is the CPU time this process has used, user and system, all
// its threads.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// schedWaits is how many scheduler latencies the runtime has recorded.
func schedWaits() uint64 {
	m := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(m)
	var n uint64
	if m[0].Value.Kind() == metrics.KindFloat64Histogram {
		for _, c := range m[0].Value.Float64Histogram().Counts {
			n += c
		}
	}
	return n
}
