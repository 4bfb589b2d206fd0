package otlpdriver

import (
	"encoding/hex"
	"sort"
	"sync"
	"time"
)

// TraceID is a 16-byte OTLP trace ID.
type TraceID [16]byte

// String is the ID in lowercase hex, as query APIs take it.
func (id TraceID) String() string { return hex.EncodeToString(id[:]) }

// Written is one trace an ingest driver exported: its ID, its span count,
// and when the export was acknowledged.
type Written struct {
	ID    TraceID
	Spans int
	At    time.Time
}

// Journal records the traces an ingest driver wrote, in bounded memory:
//
//   - a ring of the most recent ones, from which query mode picks IDs to
//     look up (only those written at least the delay ago);
//   - a sample spread evenly over the whole run, for Verify: every k-th
//     trace, k doubling (and every other kept one dropped) each time the
//     kept traces reach twice the sample size. Between two halvings it
//     holds from one to two sample sizes, so Sample picks exactly the
//     sample size of them (all when fewer were written): a sample capped
//     at the size itself would hold anything from half of it up.
//
// It is safe for concurrent use.
type Journal struct {
	mu      sync.Mutex
	ring    []Written // grown up to size as traces are written
	size    int
	next    int       // where the next entry goes
	n       int       // entries in the ring
	sample  []Written // kept for the sample: up to 2 × max
	max     int       // sample size
	every   int64     // keep every every-th trace in the sample
	total   int64     // traces added
	spans   int64     // their spans
	lastAt  time.Time
	rejects int64 // spans the server rejected (partial success)
}

// NewJournal returns a journal that keeps the last ringSize traces for
// lookups and a sample of sampleSize (at least 1) spread over the run. The ring
// grows as traces are written: a run that writes a few thousand does not
// hold 100,000 entries (4.8 MB, which the garbage collector would count as
// live heap and let as much garbage pile up beside).
func NewJournal(ringSize, sampleSize int) *Journal {
	return &Journal{size: max(ringSize, 1), max: max(sampleSize, 1), every: 1}
}

// put stores w at the ring's next place, growing the ring (doubling, up
// to its size) while it is not full; j.mu must be held.
func (j *Journal) put(w Written) {
	if len(j.ring) < j.size {
		if len(j.ring) == cap(j.ring) {
			grown := make([]Written, len(j.ring), min(max(2*cap(j.ring), 64), j.size))
			copy(grown, j.ring)
			j.ring = grown
		}
		j.ring = append(j.ring, w)
	} else {
		j.ring[j.next] = w
	}
	j.next = (j.next + 1) % j.size
	j.n = min(j.n+1, j.size)
}

// add records a written trace. Times are kept non-decreasing (a VU that
// took its clock reading a moment before another's may add after it), so
// the ring stays sorted by time.
func (j *Journal) add(id TraceID, spans int, at time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if at.Before(j.lastAt) {
		at = j.lastAt
	}
	j.lastAt = at
	w := Written{ID: id, Spans: spans, At: at}
	j.put(w)
	if j.total%j.every == 0 {
		if len(j.sample) == 2*j.max {
			half := j.sample[:0]
			for i := 0; i < len(j.sample); i += 2 {
				half = append(half, j.sample[i])
			}
			j.sample = half
			j.every *= 2
		}
		if j.total%j.every == 0 {
			j.sample = append(j.sample, w)
		}
	}
	j.total++
	j.spans += int64(spans)
}

// rejected counts spans a server rejected in a partial success.
func (j *Journal) rejected(n int64) {
	j.mu.Lock()
	j.rejects += n
	j.mu.Unlock()
}

// at returns the i-th oldest entry of the ring; j.mu must be held.
func (j *Journal) at(i int) Written {
	return j.ring[(j.next-j.n+i+len(j.ring))%len(j.ring)]
}

// Pick returns one of the traces in the ring written at or before
// before, chosen by r in [0, 1), or false when there is none.
func (j *Journal) Pick(before time.Time, r float64) (Written, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	eligible := sort.Search(j.n, func(i int) bool { return j.at(i).At.After(before) })
	if eligible == 0 {
		return Written{}, false
	}
	return j.at(min(int(r*float64(eligible)), eligible-1)), true
}

// Sample returns the traces for Verify, oldest first: the sample size of
// them, or every one kept when fewer were written, the first and the last
// kept among them.
func (j *Journal) Sample() []Written {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.sample)
	if n <= j.max {
		return append([]Written(nil), j.sample...)
	}
	out := make([]Written, j.max)
	if j.max == 1 {
		out[0] = j.sample[n-1]
		return out
	}
	// n > max, so the picks step by more than one and none repeats.
	for i := range out {
		out[i] = j.sample[(2*i*(n-1)+j.max-1)/(2*(j.max-1))] // i × (n-1)/(max-1), rounded
	}
	return out
}

// JournalStats are a journal's totals.
type JournalStats struct {
	Traces, Spans, RejectedSpans int64
	Last                         time.Time // the latest write
}

// Stats returns the journal's totals.
func (j *Journal) Stats() JournalStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return JournalStats{Traces: j.total, Spans: j.spans, RejectedSpans: j.rejects, Last: j.lastAt}
}
