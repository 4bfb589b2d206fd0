// Package dial opens the connections of perflab's net/http-based drivers
// so that each knows how long it took to open (TCP connect plus TLS
// handshake): the first request that uses a connection claims that time as
// its Result.Connect, later requests on it report 0. net/http may finish a
// dial started for one request and hand the connection to another, so the
// time travels with the connection, not with the request.
package dial

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// Dialer opens timed connections. net/http detaches a dial from the
// request context that started it, so the TLS handshake is bounded by
// Timeout on its own.
type Dialer struct {
	Net     net.Dialer
	TLS     *tls.Config // for DialTLS; ServerName defaults to the host dialed
	Timeout time.Duration
	// NeedALPN, when set, is the protocol the TLS handshake must negotiate;
	// DialTLS fails with ErrALPN otherwise.
	NeedALPN string
	ErrALPN  error
}

// New returns a Dialer with the given timeout (for the TCP connect and the
// TLS handshake each) and TLS configuration.
func New(timeout time.Duration, conf *tls.Config) *Dialer {
	return &Dialer{Net: net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}, TLS: conf, Timeout: timeout}
}

// Dial opens a timed TCP connection.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	start := time.Now()
	c, err := d.Net.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &timedConn{Conn: c, connect: time.Since(start)}, nil
}

// DialTLS opens a timed TLS connection. A failed handshake is a
// *HandshakeError, so a driver can class it as TLS without guessing.
func (d *Dialer) DialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.DialTLSOver(ctx, network, addr, nil)
}

// DialTLSOver is DialTLS with TLS over wrap(the TCP connection), when
// wrap is not nil: a driver that follows what TLS reads from the socket.
func (d *Dialer) DialTLSOver(ctx context.Context, network, addr string, wrap func(net.Conn) net.Conn) (net.Conn, error) {
	start := time.Now()
	raw, err := d.Net.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if wrap != nil {
		raw = wrap(raw)
	}
	tc := &timedConn{Conn: raw}
	conf := d.TLS
	if conf == nil {
		conf = &tls.Config{}
	}
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
	hctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, &HandshakeError{Err: err}
	}
	if d.NeedALPN != "" && conn.ConnectionState().NegotiatedProtocol != d.NeedALPN {
		raw.Close()
		return nil, d.ErrALPN
	}
	tc.connect = time.Since(start)
	return conn, nil
}

// HandshakeError is an error of the TLS handshake DialTLS made.
type HandshakeError struct{ Err error }

func (e *HandshakeError) Error() string { return e.Err.Error() }
func (e *HandshakeError) Unwrap() error { return e.Err }

// timedConn is a connection that remembers how long it took to open.
type timedConn struct {
	net.Conn
	connect time.Duration // set before the conn is handed to net/http
	claimed atomic.Bool
}

// ClaimConnect returns the open time of conn (as httptrace.GotConn sees
// it) the first time it is asked for that connection, 0 afterwards or for
// a connection this package did not dial.
func ClaimConnect(conn net.Conn) time.Duration {
	for range 4 { // *tls.Conn → (h2c shim →) *timedConn
		switch c := conn.(type) {
		case *timedConn:
			if c.claimed.CompareAndSwap(false, true) {
				return c.connect
			}
			return 0
		case *tls.Conn:
			conn = c.NetConn()
		case interface{ UnencryptedNetConn() net.Conn }: // net/http's h2c wrapper
			conn = c.UnencryptedNetConn()
		default:
			return 0
		}
	}
	return 0
}

// Unwrap is the connection conn wraps, if this package's: the TCP
// connection under a timed one.
func Unwrap(conn net.Conn) net.Conn {
	if c, ok := conn.(*timedConn); ok {
		return c.Conn
	}
	return conn
}
