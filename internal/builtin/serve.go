package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// shutdownGrace bounds how long Serve waits for in-flight requests once its
// context is done; after it, remaining connections are closed.
const shutdownGrace = 5 * time.Second

// readHeaderTimeout stops a client that opens a connection and never sends
// a request from holding it forever.
const readHeaderTimeout = 10 * time.Second

// Serve serves h on ln until ctx is done, then shuts down gracefully: it
// stops accepting, lets in-flight requests finish for up to shutdownGrace,
// and closes whatever is left. It closes ln. A clean shutdown returns nil.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	return serveHTTP(ctx, ln, &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout})
}

// serveHTTP is Serve with srv, whose Handler is set.
func serveHTTP(ctx context.Context, ln net.Listener, srv *http.Server) error {
	return serveUntil(ctx, ln, srv.Serve, func(sctx context.Context) error {
		err := srv.Shutdown(sctx)
		if err != nil {
			_ = srv.Close()
		}
		return err
	}, http.ErrServerClosed)
}

// serveUntil runs serve on ln until ctx is done, then shutdown with
// shutdownGrace to finish in. closed is what serve returns once shut
// down (nil for servers that return nil).
func serveUntil(ctx context.Context, ln net.Listener, serve func(net.Listener) error,
	shutdown func(context.Context) error, closed error) error {
	served := make(chan error, 1)
	go func() { served <- serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("cannot serve http on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := shutdown(sctx)
	if err != nil {
		err = fmt.Errorf("cannot shut down http server on %s within %v: %w", ln.Addr(), shutdownGrace, err)
	}
	if serr := <-served; serr != nil && !errors.Is(serr, closed) {
		err = errors.Join(err, fmt.Errorf("cannot serve http on %s: %w", ln.Addr(), serr))
	}
	return err
}

// ErrNotLoopback is wrapped by ListenLoopback for an address other hosts
// could reach.
var ErrNotLoopback = errors.New("not a loopback address")

// ListenLoopback listens on addr, a host:port whose host is in 127.0.0.0/8,
// is ::1 or is "localhost"; the built-in target is a test fixture and never
// listens where other machines could load it. Port 0 picks a free port.
func ListenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %q: %w", addr, err)
	}
	if !isLoopbackHost(host) {
		return nil, fmt.Errorf("cannot listen on %q: %w; use 127.0.0.1, [::1] or localhost", addr, ErrNotLoopback)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %q: %w", addr, err)
	}
	// "localhost" is resolved by the system; make sure it stayed loopback.
	if ap, perr := netip.ParseAddrPort(ln.Addr().String()); perr != nil || !ap.Addr().IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("cannot listen on %q: %w: it resolved to %s", addr, ErrNotLoopback, ln.Addr())
	}
	return ln, nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
