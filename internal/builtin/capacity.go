package builtin

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// DefaultQueueMax is how long a request may wait for its turn at a target
// with a capacity before it is turned away with a 503.
const DefaultQueueMax = time.Second

// capacityQueue lets requests through at most rate per second, first come
// first served: the n-th request admitted since the queue last ran dry gets
// the slot 1/rate after the one before it. Below the capacity a request
// waits for nothing (or for a fraction of a slot when two arrive at once);
// above it the wait grows with every request, by (1 − capacity/rate) of the
// time elapsed, until it reaches maxWait and requests are refused. So the
// latency a client sees breaks sharply at the capacity: the knee a capacity
// search must find.
type capacityQueue struct {
	slot    time.Duration // 1/rate
	maxWait time.Duration
	mu      sync.Mutex
	next    time.Time // the next free slot
}

func newCapacityQueue(rate float64, maxWait time.Duration) *capacityQueue {
	return &capacityQueue{slot: time.Duration(float64(time.Second) / rate), maxWait: maxWait}
}

// admit takes the next slot for a request arriving at now and returns how
// long it must wait for it; ok is false when that wait would exceed
// maxWait: the request is refused and takes no slot.
func (q *capacityQueue) admit(now time.Time) (wait time.Duration, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.next
	if at.Before(now) {
		at = now
	}
	wait = at.Sub(now)
	if wait > q.maxWait {
		return 0, false
	}
	q.next = at.Add(q.slot)
	return wait, true
}

// validateCapacity checks the capacity settings of c.
func (c HTTPConfig) validateCapacity() []error {
	var errs []error
	if math.IsNaN(c.Capacity) || math.IsInf(c.Capacity, 0) || c.Capacity < 0 {
		errs = append(errs, fmt.Errorf("capacity %v must be a rate >= 0 (0: unlimited)", c.Capacity))
	}
	if c.Capacity > 0 && float64(time.Second)/c.Capacity < 1 {
		errs = append(errs, fmt.Errorf("capacity %v/s is more than one request per nanosecond", c.Capacity))
	}
	if c.QueueMax < 0 {
		errs = append(errs, fmt.Errorf("queue wait %v must be >= 0", c.QueueMax))
	}
	if c.QueueMax > 0 && c.Capacity == 0 {
		errs = append(errs, fmt.Errorf("queue wait %v needs a capacity", c.QueueMax))
	}
	return errs
}
