package s3driver

import (
	"context"
	"crypto/tls"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

const (
	idleConnTimeout = 90 * time.Second
	connBufferSize  = 64 << 10 // per connection, each way: fewer syscalls for large objects
)

// newTransport builds the HTTP client every VU shares: HTTP/1.1 only (S3
// servers speak it; AWS S3 has no HTTP/2), keep-alive with no cap on idle
// connections (a VU keeps the connection it used, so N VUs hold N
// connections), no compression (bytes counted are bytes the server sent),
// no proxy from the environment. Dials are ours, so each new connection
// knows its TCP connect + TLS handshake time (see timedConn).
func newTransport(d *dialer) *http.Transport {
	var p http.Protocols
	p.SetHTTP1(true)
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.dial,
		DialTLSContext:      d.dialTLS,
		Protocols:           &p,
		DisableCompression:  true,
		MaxIdleConns:        0, // no global cap
		MaxIdleConnsPerHost: math.MaxInt32,
		IdleConnTimeout:     idleConnTimeout,
		WriteBufferSize:     connBufferSize,
		ReadBufferSize:      connBufferSize,
	}
}

// dialer opens timed connections. net/http detaches a dial from the
// request that started it, so each dial is bounded by timeout on its own.
type dialer struct {
	net     net.Dialer
	tls     *tls.Config
	timeout time.Duration
}

func newDialer(s spec, insecure bool) *dialer {
	conf := &tls.Config{
		InsecureSkipVerify: insecure, //nolint:gosec // only when the plan asks
		RootCAs:            s.caPool,
		NextProtos:         []string{"http/1.1"},
	}
	return &dialer{
		net:     net.Dialer{Timeout: s.timeout, KeepAlive: 30 * time.Second},
		tls:     conf,
		timeout: s.timeout,
	}
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	start := time.Now()
	c, err := d.net.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &timedConn{Conn: c, connect: time.Since(start)}, nil
}

func (d *dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	start := time.Now()
	raw, err := d.net.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &timedConn{Conn: raw}
	conf := d.tls
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			raw.Close()
			return nil, err
		}
		conf = conf.Clone()
		conf.ServerName = host
	}
	conn := tls.Client(tc, conf)
	hctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, &tlsError{err: err}
	}
	tc.connect = time.Since(start)
	return conn, nil
}

// tlsError marks an error of our TLS handshake, so classify need not guess.
type tlsError struct{ err error }

func (e *tlsError) Error() string { return "tls handshake: " + e.err.Error() }
func (e *tlsError) Unwrap() error { return e.err }

// timedConn is a connection that remembers how long it took to open. The
// first request on it claims that time as its Result.Connect.
type timedConn struct {
	net.Conn
	connect time.Duration // set before net/http sees the conn
	claimed atomic.Bool
}

// claimConnect returns conn's open time the first time it is asked for
// that connection, 0 afterwards or for connections we did not dial.
func claimConnect(conn net.Conn) time.Duration {
	if c, ok := conn.(*tls.Conn); ok {
		conn = c.NetConn()
	}
	if c, ok := conn.(*timedConn); ok && c.claimed.CompareAndSwap(false, true) {
		return c.connect
	}
	return 0
}
