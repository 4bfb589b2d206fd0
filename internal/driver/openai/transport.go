package openaidriver

import (
	"context"
	"crypto/tls"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// idleConnTimeout closes a keep-alive connection left idle this long.
const idleConnTimeout = 90 * time.Second

// newTransport builds the client every VU shares: HTTP/1.1, or HTTP/2 when
// an https server offers it by ALPN; keep-alive connections without a cap
// (each request in flight holds one over HTTP/1.1), no proxy from the
// environment, no compression (bytes counted are bytes sent), redirects not
// followed (RoundTrip never follows them).
func newTransport(timeout time.Duration) *http.Transport {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialTimed(ctx, d, network, addr)
		},
		Protocols:           &p,
		DisableCompression:  true,
		MaxIdleConnsPerHost: math.MaxInt32,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: timeout,
	}
}

// dialTimed opens a TCP connection that remembers how long that took.
func dialTimed(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	start := time.Now()
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &timedConn{Conn: c, connect: time.Since(start)}, nil
}

// timedConn is a connection that knows its TCP connect time. The first
// request to use it claims that time as its Result.Connect; later ones
// report 0. (net/http may finish a dial for one request and hand the
// connection to another, so the time travels with the connection.)
type timedConn struct {
	net.Conn
	connect time.Duration
	claimed atomic.Bool
}

// claimConnect returns the connect time of conn the first time it is asked
// for that connection, 0 afterwards or for a connection not dialed here.
func claimConnect(conn net.Conn) time.Duration {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if c, ok := conn.(*timedConn); ok && c.claimed.CompareAndSwap(false, true) {
		return c.connect
	}
	return 0
}
