//go:build !linux

package httpdriver

import (
	"context"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// Outside Linux there is no epoll: the driver has no event loops (it is
// no driver.Looper), and the closed model's HTTP/1.1 VUs take the
// goroutine path (conn.go), as TLS and redirects do on Linux.

func (d *Driver) loops() bool { return false }

// h1Loop is none outside Linux.
type h1Loop struct{}

func (*h1Loop) Close() error { return nil }

// doInLoop fails the operation as a loop that cannot start does; viaLoop
// needs loops(), so Do does not call it.
func (d *Driver) doInLoop(_ context.Context, _ *vuState, _ int, r *driver.Result) {
	*r = driver.Result{Op: d.name, Class: stats.Protocol, Message: "cannot start an event loop: epoll is Linux only"}
}
