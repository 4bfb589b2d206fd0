// Package interleave runs one workload against two systems in the same
// run: a system straight (direct) and the same system behind a gateway.
// Operations alternate strictly between the two, in the order the engine
// starts them, so both sides see the same arrival process at the same
// moments and whatever disturbs the machine disturbs both alike; the
// difference of their latencies is then the gateway's overhead.
//
// Each side's operations keep their driver's name behind a prefix, "direct:
// " or "gateway: " (e.g. "gateway: chat"), so the recorder keeps their
// histograms apart; Split reads a name back.
package interleave

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/perflab/perflab/internal/driver"
)

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Closer    = (*Driver)(nil)
	_ driver.Describer = (*Driver)(nil)
)

// Side is which way an operation went.
type Side uint8

// The two sides.
const (
	Direct  Side = iota // straight to the upstream
	Gateway             // through the gateway
)

// The prefixes of the two sides' operation names.
const (
	DirectPrefix  = "direct: "
	GatewayPrefix = "gateway: "
)

func (s Side) prefix() string {
	if s == Gateway {
		return GatewayPrefix
	}
	return DirectPrefix
}

func (s Side) String() string { return strings.TrimSuffix(s.prefix(), ": ") }

// Split reads an operation name written by a Driver: its side and the
// inner driver's name. ok is false for a name without either prefix.
func Split(op string) (side Side, inner string, ok bool) {
	if inner, ok = strings.CutPrefix(op, DirectPrefix); ok {
		return Direct, inner, true
	}
	if inner, ok = strings.CutPrefix(op, GatewayPrefix); ok {
		return Gateway, inner, true
	}
	return Direct, "", false
}

// Driver sends every other operation to each of its two drivers: the
// first, third, … to the direct one, the second, fourth, … to the gateway
// one. It is safe for concurrent use as its drivers are.
type Driver struct {
	sides [2]side
	n     atomic.Uint64
}

type side struct {
	d    driver.Driver
	s    Side
	last atomic.Pointer[opName] // the last name prefixed, reused while it repeats
}

type opName struct{ inner, named string }

// New returns a Driver alternating between direct and gateway, which it
// owns from then on (Close closes both).
func New(direct, gateway driver.Driver) *Driver {
	d := &Driver{}
	d.sides[Direct].d, d.sides[Direct].s = direct, Direct
	d.sides[Gateway].d, d.sides[Gateway].s = gateway, Gateway
	return d
}

// Do performs the next operation on the side whose turn it is and prefixes
// its name with the side.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	s := &d.sides[(d.n.Add(1)-1)&1]
	s.d.Do(ctx, vu, r)
	r.Op = s.name(r.Op)
}

// name is inner with the side's prefix, without allocating while the
// driver keeps using one name.
func (s *side) name(inner string) string {
	if last := s.last.Load(); last != nil && last.inner == inner {
		return last.named
	}
	n := &opName{inner: inner, named: s.s.prefix() + inner}
	s.last.Store(n)
	return n.named
}

// Close closes both drivers that hold resources.
func (d *Driver) Close() error {
	var errs []error
	for i := range d.sides {
		if c, ok := d.sides[i].d.(driver.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Facts are both drivers' facts, each name behind its side's prefix.
func (d *Driver) Facts() []driver.Fact {
	var out []driver.Fact
	for i := range d.sides {
		if ds, ok := d.sides[i].d.(driver.Describer); ok {
			for _, f := range ds.Facts() {
				out = append(out, driver.Fact{Name: d.sides[i].s.prefix() + f.Name, Value: f.Value})
			}
		}
	}
	return out
}
