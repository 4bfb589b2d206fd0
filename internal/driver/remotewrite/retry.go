package remotewrite

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// pending is a batch waiting to be sent again.
type pending struct {
	body    []byte
	batch   batch
	v2      bool // body is a remote write 2.0 request
	attempt int  // retries made so far
	due     time.Time
}

// retryQueue holds the batches to resend, and counts what became of them.
type retryQueue struct {
	mu      sync.Mutex
	items   []*pending
	retried atomic.Int64 // retries sent
	gaveUp  atomic.Int64 // batches dropped: the last retry failed too, or failed in a way not worth retrying
}

// takeDue removes and returns the batch that has been due longest, or nil.
func (q *retryQueue) takeDue(now time.Time) *pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	best := -1
	for i, p := range q.items {
		if !p.due.After(now) && (best < 0 || p.due.Before(q.items[best].due)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	p := q.items[best]
	q.items = slices.Delete(q.items, best, best+1)
	q.retried.Add(1)
	return p
}

// failed queues a batch whose attempt failed in a way worth retrying: p, or
// when p is nil a fresh batch (body and b are copied, they belong to a
// VU). After the last retry it gives the batch up. The backoff doubles
// from backoff with each retry, at most maxRetryBackoff.
func (q *retryQueue) failed(p *pending, body []byte, b *batch, v2 bool, retries int, backoff time.Duration, now time.Time) {
	if p == nil {
		c := *b
		c.segs, c.hists = slices.Clone(b.segs), slices.Clone(b.hists)
		p = &pending{body: slices.Clone(body), batch: c, v2: v2}
	}
	if p.attempt >= retries {
		q.gaveUp.Add(1)
		return
	}
	wait := backoff
	for range p.attempt {
		if wait *= 2; wait >= maxRetryBackoff {
			wait = maxRetryBackoff
			break
		}
	}
	p.attempt++
	p.due = now.Add(wait)
	q.mu.Lock()
	q.items = append(q.items, p)
	q.mu.Unlock()
}

// waiting is the number of batches and samples still queued.
func (q *retryQueue) waiting() (batches, samples int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.items {
		samples += p.batch.samples
	}
	return len(q.items), samples
}
