package stats

import (
	"testing"
	"time"
)

func TestResolution(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		0: time.Microsecond, 500 * time.Microsecond: time.Microsecond, 2047 * time.Microsecond: time.Microsecond,
		2048 * time.Microsecond: 2 * time.Microsecond, 5 * time.Millisecond: 4 * time.Microsecond,
		100 * time.Millisecond: 64 * time.Microsecond, 2 * time.Hour: 2097152 * time.Microsecond,
	} {
		if got := Resolution(d); got != want {
			t.Errorf("Resolution(%v) = %v, want %v", d, got, want)
		}
	}
	// Values one resolution apart are told apart; closer ones may not be.
	h := NewHist()
	h.Record(100 * time.Millisecond)
	h.Record(100*time.Millisecond + Resolution(100*time.Millisecond))
	if h.Min() == h.Max() {
		t.Error("values one resolution apart read the same")
	}
}
