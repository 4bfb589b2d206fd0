package builtin

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestStallWait(t *testing.T) {
	const s, ms, ns = time.Second, time.Millisecond, time.Nanosecond
	tests := []struct {
		name                     string
		elapsed, stallFor, every time.Duration
		want                     time.Duration
	}{
		{"start", 0, s, 10 * s, 0},
		{"before first window", 8*s + 999*ms, s, 10 * s, 0},
		{"first window opens", 9 * s, s, 10 * s, s},
		{"inside first window", 9*s + 250*ms, s, 10 * s, 750 * ms},
		{"last nanosecond of window", 10*s - ns, s, 10 * s, ns},
		{"window closes", 10 * s, s, 10 * s, 0},
		{"between windows", 15 * s, s, 10 * s, 0},
		{"third window opens", 29 * s, s, 10 * s, s},
		{"inside third window", 29*s + 900*ms, s, 10 * s, 100 * ms},
		{"short stall", 1850 * ms, 150 * ms, 2 * s, 150 * ms},
		{"disabled: no stall", 9*s + 500*ms, 0, 10 * s, 0},
		{"disabled: no period", 9*s + 500*ms, s, 0, 0},
		{"disabled: stall fills period", 9*s + 500*ms, 10 * s, 10 * s, 0},
		{"disabled: negative", 9*s + 500*ms, -s, 10 * s, 0},
		{"clock before start", -500 * ms, s, 10 * s, 0},
	}
	for _, tt := range tests {
		if got := stallWait(tt.elapsed, tt.stallFor, tt.every); got != tt.want {
			t.Errorf("%s: stallWait(%v, %v, %v) = %v, want %v", tt.name, tt.elapsed, tt.stallFor, tt.every, got, tt.want)
		}
	}
}

func TestStallsBegun(t *testing.T) {
	const s = time.Second
	tests := []struct {
		elapsed, stallFor, every time.Duration
		want                     int64
	}{
		{0, s, 10 * s, 0},
		{9*s - 1, s, 10 * s, 0},
		{9 * s, s, 10 * s, 1},
		{10 * s, s, 10 * s, 1},
		{18 * s, s, 10 * s, 1},
		{19 * s, s, 10 * s, 2},
		{29*s + 500*time.Millisecond, s, 10 * s, 3},
		{100 * s, 0, 10 * s, 0},
		{100 * s, s, 0, 0},
	}
	for _, tt := range tests {
		if got := stallsBegun(tt.elapsed, tt.stallFor, tt.every); got != tt.want {
			t.Errorf("stallsBegun(%v, %v, %v) = %d, want %d", tt.elapsed, tt.stallFor, tt.every, got, tt.want)
		}
	}
}

// draws samples n latencies from a seeded generator.
func draws(n int, dist string, latency, jitter time.Duration) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = sampleLatency(rng, dist, latency, jitter)
	}
	return out
}

func meanStddev(ds []time.Duration) (mean, sd float64) {
	for _, d := range ds {
		mean += float64(d)
	}
	mean /= float64(len(ds))
	for _, d := range ds {
		sd += (float64(d) - mean) * (float64(d) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(ds)-1))
}

// within fails the test unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g ± %.3g", what, got, want, tol)
	}
}

func TestSampleLatencyFixed(t *testing.T) {
	const l = 20 * time.Millisecond
	for _, d := range draws(1000, DistFixed, l, 5*time.Millisecond) {
		if d != l {
			t.Fatalf("fixed draw = %v, want exactly %v", d, l)
		}
	}
}

func TestSampleLatencyUniform(t *testing.T) {
	const n, l, j = 200_000, 20 * time.Millisecond, 2 * time.Millisecond
	ds := draws(n, DistUniform, l, j)
	for _, d := range ds {
		if d < l-j || d > l+j {
			t.Fatalf("uniform draw %v outside [%v, %v]", d, l-j, l+j)
		}
	}
	mean, sd := meanStddev(ds)
	wantSD := float64(j) / math.Sqrt(3)
	// Five standard errors: the mean's is sd/√n; the sample stddev's,
	// for a uniform (kurtosis 1.8), about 0.45·sd/√n.
	within(t, "uniform mean", mean, float64(l), 5*wantSD/math.Sqrt(n))
	within(t, "uniform stddev", sd, wantSD, 5*0.45*wantSD/math.Sqrt(n))
}

func TestSampleLatencyNormal(t *testing.T) {
	const n, l, j = 200_000, 20 * time.Millisecond, 2 * time.Millisecond
	ds := draws(n, DistNormal, l, j)
	mean, sd := meanStddev(ds)
	// Five standard errors: J/√n for the mean, J/√(2n) for the stddev.
	within(t, "normal mean", mean, float64(l), 5*float64(j)/math.Sqrt(n))
	within(t, "normal stddev", sd, float64(j), 5*float64(j)/math.Sqrt(2*n))
}

// A spread wider than the latency must clamp at 0: never negative, and the
// mass below 0 lands exactly on 0 (not folded back, not redrawn).
func TestSampleLatencyClampsAtZero(t *testing.T) {
	const n = 200_000
	tests := []struct {
		dist     string
		l, j     time.Duration
		wantZero float64 // P(draw < 0) before clamping
	}{
		{DistNormal, time.Millisecond, 5 * time.Millisecond, 0.42074}, // Φ(-0.2)
		{DistUniform, time.Millisecond, 3 * time.Millisecond, 1.0 / 3},
	}
	for _, tt := range tests {
		zeros := 0
		for _, d := range draws(n, tt.dist, tt.l, tt.j) {
			if d < 0 {
				t.Fatalf("%s draw %v is negative", tt.dist, d)
			}
			if d == 0 {
				zeros++
			}
		}
		se := math.Sqrt(tt.wantZero * (1 - tt.wantZero) / n)
		within(t, tt.dist+" fraction at 0", float64(zeros)/n, tt.wantZero, 5*se)
	}
}

func TestNewRandSeeded(t *testing.T) {
	a, b := newRand(42), newRand(42)
	for i := range 100 {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: seeded generators differ: %d != %d", i, x, y)
		}
	}
}

// Run under -race: both kinds of generator are shared by every request.
func TestNewRandConcurrentUse(t *testing.T) {
	for _, seed := range []int64{0, 42} {
		rng := newRand(seed)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 1000 {
					sampleLatency(rng, DistNormal, time.Millisecond, time.Millisecond)
				}
			})
		}
		wg.Wait()
	}
}
