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
