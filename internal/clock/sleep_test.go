package clock

import (
	"context"
	"testing"
	"time"
)

func TestSleepWaitsAtLeastTheDuration(t *testing.T) {
	for _, d := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond} {
		start := time.Now()
		if !Sleep(context.Background(), d) {
			t.Fatalf("Sleep(%v) reported a cancelled wait", d)
		}
		if got := time.Since(start); got < d {
			t.Errorf("Sleep(%v) returned after %v", d, got)
		}
	}
}

func TestSleepStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep with a cancelled context reported a full wait")
	}
	if time.Since(start) > time.Minute {
		t.Error("Sleep ignored the cancelled context")
	}
}

// BenchmarkOvershoot reports how late Sleep and time.Sleep wake, in µs; the
// reason this package exists. Run: go test -bench Overshoot ./internal/clock
func BenchmarkOvershoot(b *testing.B) {
	for _, f := range []struct {
		name  string
		sleep func(time.Duration)
	}{
		{"clock.Sleep", func(d time.Duration) { Sleep(context.Background(), d) }},
		{"clock.UntilSpun", func(d time.Duration) { UntilSpun(context.Background(), time.Now().Add(d)) }},
		{"time.Sleep", time.Sleep},
	} {
		b.Run(f.name, func(b *testing.B) {
			var late time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				f.sleep(500 * time.Microsecond)
				late += time.Since(start) - 500*time.Microsecond
			}
			b.ReportMetric(float64(late.Microseconds())/float64(b.N), "µs-late/op")
		})
	}
}

func TestUntilSpunWaitsUntilTheTime(t *testing.T) {
	for _, d := range []time.Duration{0, 50 * time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
		end := time.Now().Add(d)
		if !UntilSpun(context.Background(), end) {
			t.Fatalf("UntilSpun(+%v) reported a cancelled wait", d)
		}
		if now := time.Now(); now.Before(end) {
			t.Errorf("UntilSpun(+%v) returned %v early", d, end.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if UntilSpun(ctx, time.Now().Add(time.Hour)) {
		t.Error("UntilSpun with a cancelled context reported a full wait")
	}
}
