package builtin

import (
	"math/rand/v2"
	"sync"
	"time"
)

// sampleLatency draws one response delay from dist. It never returns a
// negative delay: draws below zero are clamped to 0, so a wide spread around
// a small latency piles up at 0 rather than being folded or redrawn.
func sampleLatency(rng *rand.Rand, dist string, latency, jitter time.Duration) time.Duration {
	var d float64
	switch dist {
	case DistUniform:
		d = float64(latency) + (2*rng.Float64()-1)*float64(jitter)
	case DistNormal:
		d = float64(latency) + rng.NormFloat64()*float64(jitter)
	default:
		d = float64(latency)
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(d)
}

// stallWait returns how long a request arriving elapsed after the start must
// wait for the current stall to end. Stall windows are
// [k*every + (every-stallFor), (k+1)*every) for k = 0, 1, ...; outside them,
// or with stalls disabled (stallFor <= 0, every <= 0, stallFor >= every), the
// wait is 0.
func stallWait(elapsed, stallFor, every time.Duration) time.Duration {
	if !stallEnabled(stallFor, every) || elapsed < 0 {
		return 0
	}
	phase := elapsed % every
	if phase < every-stallFor {
		return 0
	}
	return every - phase
}

// stallsBegun returns how many stall windows have begun by elapsed,
// including one in progress.
func stallsBegun(elapsed, stallFor, every time.Duration) int64 {
	if !stallEnabled(stallFor, every) {
		return 0
	}
	first := every - stallFor
	if elapsed < first {
		return 0
	}
	return int64((elapsed-first)/every) + 1
}

func stallEnabled(stallFor, every time.Duration) bool {
	return stallFor > 0 && every > 0 && stallFor < every
}

// newRand returns a generator safe for concurrent use. With seed 0 it draws
// from the runtime's per-thread generator (no lock); with a seed it uses one
// PCG stream behind a mutex, so a sequence of requests is reproducible.
// rand.Rand keeps no state of its own, so a safe Source makes it safe.
func newRand(seed int64) *rand.Rand {
	if seed == 0 {
		return rand.New(runtimeSource{})
	}
	return rand.New(&lockedSource{src: rand.NewPCG(uint64(seed), uint64(seed))})
}

type runtimeSource struct{}

func (runtimeSource) Uint64() uint64 { return rand.Uint64() }

type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}
