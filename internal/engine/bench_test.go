package engine

import (
	"context"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkClosedLoop is the engine's cost per operation of a driver that
// does nothing: one VU in a closed loop for 200 ms, in ns per operation.
//
//	go test -run '^$' -bench 'ClosedLoop|OpenLoop' -count 5 ./internal/engine/
func BenchmarkClosedLoop(b *testing.B) {
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(1, 200*time.Millisecond), Driver: fake(instant)}
	benchRun(b, w, func(s Summary, ops int64) int64 { return ops })
}

// BenchmarkOpenLoop is the open model's cost per arrival at a rate it
// cannot reach (the dispatcher issues arrivals back to back), with a
// driver that does nothing, in ns per issued arrival.
func BenchmarkOpenLoop(b *testing.B) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(20_000_000, 200*time.Millisecond), VUsMax: 4, Driver: fake(instant)}
	benchRun(b, w, func(s Summary, _ int64) int64 { return int64(s.Scheduled) })
}

func benchRun(b *testing.B, w Workload, count func(Summary, int64) int64) {
	var n int64
	var d time.Duration
	for b.Loop() {
		c := &collect{}
		sum, err := Run(context.Background(), context.Background(), w, c)
		if err != nil {
			b.Fatal(err)
		}
		all, _ := c.total()
		n += count(sum, all.Classes.Total())
		d += sum.LoadEnd.Sub(sum.Start)
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(n), "ns/request")
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
