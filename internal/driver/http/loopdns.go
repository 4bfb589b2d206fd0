//go:build linux

package httpdriver

import (
	"context"
	"net"
	"net/netip"
	"sync"
)

// A loop looks a target's name up for every dial, as net.Dialer does,
// and off its goroutine: a slow resolver holds back that VU only, within
// its request's time, not every VU of the loop. An IP address needs no
// lookup (dial).

// lookupDone is the answer of one lookup: for the operation op of the
// VU at conns[id].
type lookupDone struct {
	id    int32
	op    uint64
	addrs []netip.AddrPort
	err   error
}

// lookups holds the answers that came since the loop last looked.
type lookups struct {
	mu   sync.Mutex
	done []lookupDone
}

// lookup looks c's target up for its operation, bounded by the
// operation's deadline and the loop's ctx; the answer comes through Wake.
func (l *h1Loop) lookup(c *h1Conn) {
	id, op, host, port, dns := c.id, c.op, l.t.host, l.t.port, l.t.dns
	// A lookup still going at the deadline is the request's timeout, which
	// expire reports as on the other paths: it may go on for the slack.
	ctx, cancel := context.WithDeadline(l.ctx, c.deadline.Add(l.t.slack))
	go func() {
		defer cancel()
		d := lookupDone{id: id, op: op}
		ips, err := dns.LookupNetIP(ctx, "ip", host)
		if err != nil {
			d.err = &net.OpError{Op: "dial", Net: "tcp", Err: err}
		}
		for _, ip := range ips {
			d.addrs = append(d.addrs, netip.AddrPortFrom(ip.Unmap(), port))
		}
		l.lookups.mu.Lock()
		l.lookups.done = append(l.lookups.done, d)
		l.lookups.mu.Unlock()
		l.Wake()
	}()
}

// takeLookups goes on with the dials whose lookup answered. An answer for
// an operation that has ended (timed out, interrupted) is dropped.
func (l *h1Loop) takeLookups() {
	l.lookups.mu.Lock()
	done := l.lookups.done
	l.lookups.done = nil
	l.lookups.mu.Unlock()
	for _, d := range done {
		c := &l.conns[d.id]
		if c.state != stResolving || c.op != d.op {
			continue
		}
		if d.err != nil && !l.host.Now().Before(c.deadline) {
			l.fail(c, errLoopTimeout) // the lookup used the request's time up: a timeout, as on the other paths
			continue
		}
		if d.err != nil {
			l.fail(c, d.err)
			continue
		}
		c.addrs, c.ai = d.addrs, 0
		l.connectNext(c)
	}
}
