//go:build linux

package clock

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWake reports what waking for one arrival costs: b.N arrivals
// 50 µs apart (20,000/s, the open model's hardest rate in bench/), each
// waited for alone, with the CPU time per wake (cpu-µs/wake) and how late
// the wait ended (lag-p50-µs, lag-p99-µs). "fine" is the timerfd this
// package sleeps on, "go-timer" time.Sleep, "spin" a loop that yields
// between looks at the clock. On a 2-core VM (2026-11-27) a fine wake cost
// 25 µs of CPU, which is why the open model's dispatcher wakes once a
// quantum and sends every arrival due by then:
//
//	taskset -c 0 go test -run '^$' -bench Wake -benchtime 20000x ./internal/clock
func BenchmarkWake(b *testing.B) {
	const gap = 50 * time.Microsecond
	for _, v := range []struct {
		name string
		wait func(t *Timer, d time.Duration)
	}{
		{"fine", func(t *Timer, d time.Duration) { t.Sleep(d) }},
		{"go-timer", func(_ *Timer, d time.Duration) { time.Sleep(d) }},
		{"spin", func(_ *Timer, d time.Duration) {
			for end := time.Now().Add(d); time.Now().Before(end); {
				runtime.Gosched()
			}
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			t, err := NewTimer()
			if err != nil {
				b.Skip(err)
			}
			defer t.Close()
			lags := make([]time.Duration, 0, b.N)
			cpu0 := cpuTime()
			start := time.Now()
			b.ResetTimer()
			for i := range b.N {
				due := start.Add(time.Duration(i+1) * gap)
				v.wait(t, time.Until(due))
				lags = append(lags, time.Since(due))
			}
			b.StopTimer()
			slices.Sort(lags)
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/wake")
			b.ReportMetric(float64(lags[len(lags)/2])/float64(time.Microsecond), "lag-p50-µs")
			b.ReportMetric(float64(lags[len(lags)*99/100])/float64(time.Microsecond), "lag-p99-µs")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
