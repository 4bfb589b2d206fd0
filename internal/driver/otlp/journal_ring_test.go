package otlpdriver

import (
	"testing"
	"time"
)

func TestJournalRingGrowsUpToItsSize(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := NewJournal(100, 4)
	if cap(j.ring) != 0 {
		t.Fatalf("a new journal holds %d entries, want none before a write", cap(j.ring))
	}
	for i := range 3 {
		j.add(TraceID{byte(i)}, 1, base.Add(time.Duration(i)*time.Second))
	}
	if w, ok := j.Pick(base.Add(time.Hour), 0.99); !ok || w.ID != (TraceID{2}) {
		t.Errorf("Pick over 3 traces: %v %v, want trace 2", w.ID, ok)
	}
	if w, ok := j.Pick(base, 0.5); !ok || w.ID != (TraceID{0}) {
		t.Errorf("Pick of those written by the first: %v %v, want trace 0", w.ID, ok)
	}
	for i := 3; i < 250; i++ {
		j.add(TraceID{byte(i)}, 1, base.Add(time.Duration(i)*time.Second))
	}
	if len(j.ring) != 100 || cap(j.ring) != 100 {
		t.Errorf("after 250 traces the ring has %d entries (capacity %d), want 100", len(j.ring), cap(j.ring))
	}
	if w, _ := j.Pick(base.Add(time.Hour), 0); w.ID != (TraceID{150}) {
		t.Errorf("the oldest trace kept is %v, want 150", w.ID)
	}
	if w, _ := j.Pick(base.Add(time.Hour), 0.999); w.ID != (TraceID{249}) {
		t.Errorf("the newest trace kept is %v, want 249", w.ID)
	}
}

// TestJournalSampleIsItsSize: whatever the number of traces written, the
// sample is exactly its size (all of them when fewer were written), in
// the order written, from the first trace, and spread over the run: no
// gap between two picks, nor after the last, is more than three times
// the even spacing.
func TestJournalSampleIsItsSize(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, size := range []int{1, 2, 3, 4, 20, 100} {
		j := NewJournal(10, size)
		for n := 1; n <= 1500; n++ {
			j.add(TraceID{}, n-1, base) // Spans carries the trace's number
			sample := j.Sample()
			if len(sample) != min(n, size) {
				t.Fatalf("size %d, %d traces written: a sample of %d", size, n, len(sample))
			}
			spacing := (n + size - 1) / size
			prev := -1
			for _, w := range append(sample, Written{Spans: n}) {
				if w.Spans <= prev || (prev >= 0 && w.Spans-prev > 3*spacing) {
					t.Fatalf("size %d, %d traces written: trace %d after %d (spacing %d)", size, n, w.Spans, prev, spacing)
				}
				prev = w.Spans
			}
			if size > 1 && sample[0].Spans != 0 {
				t.Fatalf("size %d, %d traces written: the sample starts at trace %d", size, n, sample[0].Spans)
			}
		}
	}
}
