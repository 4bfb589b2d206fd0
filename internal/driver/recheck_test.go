package driver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/testutil"
)

var _ driver.Clock = (*testutil.FakeClock)(nil)

// TestRecheckBacksOffToTheDeadline: the waits double from 500 ms up to
// 5 s, the last one is cut so that the last look is at the deadline, and
// a look that finds nothing missing ends it at once.
func TestRecheckBacksOffToTheDeadline(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		name      string
		deadline  time.Duration
		missUntil int // looks that still miss something
		looks     int
		waits     []time.Duration
	}{
		{"found at once", 30 * time.Second, 0, 1, nil},
		{"found on the third look", 30 * time.Second, 2, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"never found", 20 * time.Second, 1000, 8, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second,
			4 * time.Second, 5 * time.Second, 5 * time.Second, 2500 * time.Millisecond}},
		{"deadline already passed", -time.Second, 1000, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testutil.NewFakeClock(start)
			var at []time.Time
			n, err := driver.Recheck(context.Background(), clk, start.Add(tc.deadline), func(context.Context) bool {
				at = append(at, clk.Now())
				return len(at) <= tc.missUntil
			})
			if err != nil || n != tc.looks || len(at) != tc.looks {
				t.Errorf("Recheck = %d, %v after %d looks; want %d", n, err, len(at), tc.looks)
			}
			if w := clk.Sleeps(); !slices.Equal(w, tc.waits) {
				t.Errorf("waits %v, want %v", w, tc.waits)
			}
			if tc.looks > 1 && tc.missUntil >= tc.looks && !at[len(at)-1].Equal(start.Add(tc.deadline)) {
				t.Errorf("last look at %v, want the deadline", at[len(at)-1].Sub(start))
			}
		})
	}
}

func TestRecheckStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := testutil.NewFakeClock(time.Unix(0, 0))
	n, err := driver.Recheck(ctx, clk, clk.Now().Add(time.Minute), func(context.Context) bool { cancel(); return true })
	if n != 1 || err != context.Canceled {
		t.Errorf("Recheck = %d, %v; want 1 look, context.Canceled", n, err)
	}
}

// TestSettle: each state of a check fires from its own evidence and from
// nothing less: lost only on an answer that showed data missing (a check
// that got no answer is unverified, never lost), late only when some was
// found on a re-check, ok only when all was found at the first look.
func TestSettle(t *testing.T) {
	for _, tt := range []struct {
		name             string
		lost, unanswered bool
		late             float64
		state, reason    string
	}{
		{"all found at once", false, false, 0, driver.CheckOK, ""},
		{"all found, some on a re-check", false, false, 3, driver.CheckLate, ""},
		{"no answer at the end", false, true, 0, driver.CheckUnverified, "HTTP 503"},
		{"no answer, after some showed late", false, true, 3, driver.CheckUnverified, "HTTP 503"},
		{"an answer showed data missing", true, false, 0, driver.CheckLost, ""},
		{"missing, after some showed late", true, false, 3, driver.CheckLost, ""},
		{"missing in one answer, no answer to another", true, true, 0, driver.CheckLost, ""},
	} {
		c := driver.Check{Name: "samples", Late: tt.late}
		c.Settle(tt.lost, tt.unanswered, "HTTP 503")
		if c.State != tt.state || c.Reason != tt.reason {
			t.Errorf("%s: %s (%q), want %s (%q)", tt.name, c.State, c.Reason, tt.state, tt.reason)
		}
	}
}
