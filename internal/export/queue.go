package export

import "sync"

// DefaultQueue is how many series a target's queue holds by default:
// minutes of a run of a few workloads and components at one interval a
// second, some tens of MB at most.
const DefaultQueue = 200_000

// queue holds the batches waiting for a target, at most max series in
// all. Put never blocks: a batch that does not fit drops the oldest ones,
// which are counted.
type queue struct {
	mu      sync.Mutex
	max     int
	batches [][]Series
	n       int   // series queued
	dropped int64 // series dropped from a full queue
}

func newQueue(max int) *queue {
	if max <= 0 {
		max = DefaultQueue
	}
	return &queue{max: max}
}

// put queues b, dropping the oldest batches while the queue would hold
// more than its bound (b itself, when it alone is larger).
func (q *queue) put(b []Series) {
	if len(b) == 0 {
		return
	}
	q.mu.Lock()
	q.batches = append(q.batches, b)
	q.n += len(b)
	for q.n > q.max && len(q.batches) > 0 {
		q.n -= len(q.batches[0])
		q.dropped += int64(len(q.batches[0]))
		q.batches[0] = nil
		q.batches = q.batches[1:]
	}
	q.mu.Unlock()
}

// take removes and returns up to max series, whole batches, oldest first
// (at least one batch, however large).
func (q *queue) take(max int) []Series {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Series
	for len(q.batches) > 0 && (len(out) == 0 || len(out)+len(q.batches[0]) <= max) {
		out = append(out, q.batches[0]...)
		q.n -= len(q.batches[0])
		q.batches[0] = nil
		q.batches = q.batches[1:]
	}
	return out
}

// counts are how many series the queue holds and has dropped.
func (q *queue) counts() (queued int, dropped int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n, q.dropped
}
