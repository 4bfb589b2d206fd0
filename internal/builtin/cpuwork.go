package builtin

import (
	"runtime"
	"time"
)

// burnChunk is the number of spin iterations between two readings of the
// thread's CPU clock: a few microseconds of work, so that the clock reads
// cost little and a burn overshoots by little.
const burnChunk = 2000

// BurnCPU spins until the calling goroutine's thread has used d of CPU
// time, and returns a value derived from the work so that it is not
// optimised away. The goroutine is locked to its thread meanwhile, so the
// thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) measures exactly the burn:
// time the thread spends descheduled on a busy machine does not count, and
// d of CPU per request stays d however loaded the machine is. d ≤ 0 burns
// nothing.
func BurnCPU(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	wallEnd := time.Now().Add(d) // only if the thread clock cannot be read
	x := uint64(0x9e3779b97f4a7c15)
	for {
		for range burnChunk {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		if ok {
			if now, _ := threadCPU(); now-start >= d {
				return x
			}
		} else if !time.Now().Before(wallEnd) {
			return x
		}
	}
}
