//go:build unix

package engine

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkClosedLoop is the engine's cost per operation of a driver that
// does nothing: one VU in a closed loop for 200 ms, in ns of wall time
// and of CPU time (the process's) per operation.
//
//	go test -run '^$' -bench 'ClosedLoop|OpenLoop|Do$' -count 5 ./internal/engine/
func BenchmarkClosedLoop(b *testing.B) {
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(1, 200*time.Millisecond), Driver: fake(instant)}
	benchRun(b, w)
}

// BenchmarkOpenLoop is the open model's cost per arrival at 100,000/s
// for 200 ms (dispatched in batches, a quantum apart) with a driver that
// does nothing.
func BenchmarkOpenLoop(b *testing.B) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100_000, 200*time.Millisecond), VUsMin: 4, VUsMax: 64, Driver: fake(instant)}
	benchRun(b, w)
}

func benchRun(b *testing.B, w Workload) {
	var n int64
	var d time.Duration
	cpu0 := cpuTime(b)
	for b.Loop() {
		c := &collect{}
		sum, err := Run(context.Background(), context.Background(), w, c)
		if err != nil {
			b.Fatal(err)
		}
		all, _ := c.total()
		n += all.Classes.Total()
		d += sum.LoadEnd.Sub(sum.Start)
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(n), "ns/request")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(n), "cpu-ns/request")
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDo is the engine's own work around one operation of a driver
// that does nothing: reading the clock before and after, and recording
// the sample.
func BenchmarkDo(b *testing.B) {
	start := time.Now()
	r := &run{w: Workload{Driver: fake(instant)}, clk: realClock{}, start: start, rec: stats.NewRecorder(1, start), opCtx: context.Background()}
	v := &vu{}
	for b.Loop() {
		r.do(0, &v.res, start)
	}
}
