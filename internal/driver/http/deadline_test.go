package httpdriver

import (
	"net"
	"testing"
	"time"
)

// deadlines is a connection that records the deadlines set on it.
type deadlines struct {
	net.Conn
	set []time.Time
}

func (d *deadlines) SetDeadline(t time.Time) error { d.set = append(d.set, t); return nil }

// TestArmMovesTheDeadlineOncePerSlack: requests 1 ms apart, each asking
// for a deadline 1 ms later than the last, move the connection's
// deadline once per slack, never before what a request asked for nor
// more than the slack after it.
func TestArmMovesTheDeadlineOncePerSlack(t *testing.T) {
	under := &deadlines{}
	const slack = 10 * time.Millisecond
	c := &h1Client{t: &h1Template{slack: slack}, conn: under}
	t0 := time.Now()
	for ms := range 25 {
		asked := t0.Add(time.Duration(ms) * time.Millisecond)
		if err := c.arm(asked); err != nil {
			t.Fatal(err)
		}
		now := under.set[len(under.set)-1]
		if now.Before(asked) || now.After(asked.Add(slack)) {
			t.Fatalf("asked for %v, the connection's deadline is %v: not within [asked, asked+%v]", asked.Sub(t0), now.Sub(t0), slack)
		}
	}
	want := []time.Duration{10, 21, 32} // set at 0, 11 and 22 ms, each slack later
	if len(under.set) != len(want) {
		t.Fatalf("%d deadlines set for 25 requests over 24 ms with a slack of %v, want %d: %v", len(under.set), slack, len(want), under.set)
	}
	for i, w := range want {
		if got := under.set[i].Sub(t0); got != w*time.Millisecond {
			t.Errorf("deadline %d at %v, want %v", i, got, w*time.Millisecond)
		}
	}
	// An earlier deadline than the one set is set at once.
	_ = c.arm(t0)
	if got := under.set[len(under.set)-1]; !got.Equal(t0.Add(slack)) {
		t.Errorf("asked for a deadline before the one set, got %v, want %v", got.Sub(t0), slack)
	}
}

// TestArmKeepsAnInterruptedDeadlinePast: once the VU's ctx is done, every
// deadline asked for is set in the past instead, so that no read or write
// waits.
func TestArmKeepsAnInterruptedDeadlinePast(t *testing.T) {
	under := &deadlines{}
	c := &h1Client{t: &h1Template{slack: time.Millisecond}, conn: under}
	c.halted.Store(true)
	if err := c.arm(time.Now().Add(time.Minute)); err == nil {
		t.Error("arm after an interrupt: no error")
	}
	if len(under.set) != 1 || !under.set[0].Equal(alreadyPassed) {
		t.Errorf("deadlines set %v, want only one in the past", under.set)
	}
}
