package httpdriver

import (
	"context"
	"crypto/tls"
	"errors"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// errNotH2 is returned by the TLS dialer when Proto is h2 and the server
// did not choose h2 by ALPN; Classify maps it to stats.Protocol.
var errNotH2 = errors.New("server did not negotiate h2 by ALPN")

// newTransport builds the net/http client: Go's Transport speaks HTTP/1.1,
// HTTP/2 over TLS and, since Go 1.24, prior-knowledge cleartext HTTP/2, all
// selected by Protocols. Each VU gets a Clone of it when MaxConns is 0.
//
// Dialing (and TLS) is done by our own functions so that each connection
// carries its own dial+handshake time (see timedConn). httptrace's
// ConnectStart/ConnectDone cannot give that reliably: net/http finishes a
// dial in the background after the request that started it has returned or
// been served by another connection, and the callbacks then fire late.
func newTransport(c Config, dl *dialer) *http.Transport {
	var p http.Protocols
	switch c.Proto {
	case ProtoH1:
		p.SetHTTP1(true)
	case ProtoH2:
		p.SetHTTP2(true)
	case ProtoH2C:
		p.SetUnencryptedHTTP2(true)
	default: // auto
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	}
	idle := c.MaxConns
	if idle == 0 {
		idle = math.MaxInt32 // no artificial cap
	}
	return &http.Transport{
		Proxy:               nil, // never an environment proxy: measure the target
		DialContext:         dl.dial,
		DialTLSContext:      dl.dialTLS,
		Protocols:           &p,
		DisableCompression:  true, // bytes counted are bytes on the wire
		MaxIdleConns:        0,    // no global cap
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     c.MaxConns,
		IdleConnTimeout:     idleConnTimeout,
	}
}

// newDialer builds the dialer of both clients: TCP, and TLS with the
// ALPN protocols Proto allows.
func newDialer(c Config) (*dialer, error) {
	tlsConf := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := loadCA(c.CAFile)
		if err != nil {
			return nil, err
		}
		tlsConf.RootCAs = pool
	}
	switch c.Proto {
	case ProtoH1:
		tlsConf.NextProtos = []string{"http/1.1"}
	case ProtoH2:
		tlsConf.NextProtos = []string{"h2"}
	case ProtoAuto:
		tlsConf.NextProtos = []string{"h2", "http/1.1"}
	}
	return &dialer{
		net:     net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second},
		tls:     tlsConf,
		timeout: c.Timeout,
		needH2:  c.Proto == ProtoH2,
	}, nil
}

// dialer opens timed connections. net/http detaches dials from the request
// context (a dial may serve a later request), so each dial is bounded by
// timeout on its own.
type dialer struct {
	net     net.Dialer
	tls     *tls.Config
	timeout time.Duration
	needH2  bool
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
		return nil, &tlsHandshakeError{err: err}
	}
	if d.needH2 && conn.ConnectionState().NegotiatedProtocol != "h2" {
		raw.Close()
		return nil, errNotH2
	}
	tc.connect = time.Since(start)
	return conn, nil
}

// tlsHandshakeError marks an error that happened during our TLS handshake,
// so Classify need not guess from the text.
type tlsHandshakeError struct{ err error }

func (e *tlsHandshakeError) Error() string { return e.err.Error() }
func (e *tlsHandshakeError) Unwrap() error { return e.err }

// timedConn is a connection that remembers how long it took to open (TCP
// connect plus TLS handshake). The first request to use it claims that time
// as its Result.Connect; later requests on it report 0.
type timedConn struct {
	net.Conn
	connect time.Duration // set before the conn is handed to net/http
	claimed atomic.Bool
}

// claimConnect returns the connect time of conn (as seen by
// httptrace.GotConn) the first time it is called for that connection, 0
// afterwards or for connections we did not dial.
func claimConnect(conn net.Conn) time.Duration {
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
