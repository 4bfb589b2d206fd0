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

func TestFastConnMovesItsDeadlineOncePerSlack(t *testing.T) {
	under := &deadlines{}
	const slack = 10 * time.Millisecond
	c := &fastConn{Conn: under, fc: &fastClient{slack: slack}}
	t0 := time.Now()
	// fasthttp asks for a write deadline, then a read one, per request;
	// requests 1 ms apart.
	for ms := range 25 {
		asked := t0.Add(time.Duration(ms) * time.Millisecond)
		_ = c.SetWriteDeadline(asked)
		_ = c.SetReadDeadline(asked)
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
	_ = c.SetReadDeadline(t0)
	if got := under.set[len(under.set)-1]; !got.Equal(t0.Add(slack)) {
		t.Errorf("asked for a deadline before the one set, got %v, want %v", got.Sub(t0), slack)
	}
}

func TestFastConnKeepsAnInterruptedDeadlinePast(t *testing.T) {
	under := &deadlines{}
	fc := &fastClient{slack: time.Second}
	c := &fastConn{Conn: under, fc: fc}
	fc.conn.Store(c)
	t0 := time.Now()
	_ = c.SetWriteDeadline(t0)
	fc.interrupt(fc.gen)
	_ = c.SetReadDeadline(t0) // within the slack of the deadline set before the interrupt
	if got := under.set[len(under.set)-1]; !got.Equal(alreadyPassed) {
		t.Fatalf("after an interrupt the deadline is %v, want one passed", got)
	}
	fc.interrupted.Store(false) // a new ctx is watched
	_ = c.SetReadDeadline(t0)
	if got := under.set[len(under.set)-1]; !got.Equal(t0.Add(time.Second)) {
		t.Errorf("the first deadline after an interrupt ended is %v, want the one asked for plus the slack", got)
	}
}
