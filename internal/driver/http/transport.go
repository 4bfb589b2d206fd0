package httpdriver

import (
	"crypto/tls"
	"errors"
	"math"
	"net/http"

	"github.com/perflab/perflab/internal/driver/dial"
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
func newTransport(c Config, dl *dial.Dialer) *http.Transport {
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
	if idle == 0 { // equivalent mutant: !=; a VU's transport holds one connection, MaxConnsPerHost caps a pool's
		idle = math.MaxInt32 // no artificial cap
	}
	return &http.Transport{
		Proxy:               nil, // never an environment proxy: measure the target
		DialContext:         dl.Dial,
		DialTLSContext:      dl.DialTLS,
		Protocols:           &p,
		DisableCompression:  true, // bytes counted are bytes on the wire
		MaxIdleConns:        0,    // no global cap
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     c.MaxConns,
		IdleConnTimeout:     idleConnTimeout,
		// One bound for every path (h1parse.go); net/http's trailers are
		// bounded by its read buffer, 4 KiB, as perflab's are.
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
}

// newDialer builds the dialer of both clients: TCP, and TLS with the
// ALPN protocols Proto allows.
func newDialer(c Config) (*dial.Dialer, error) {
	tlsConf := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := dial.LoadCA(c.CAFile)
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
	d := dial.New(c.Timeout, tlsConf)
	if c.Proto == ProtoH2 {
		d.NeedALPN, d.ErrALPN = "h2", errNotH2
	}
	return d, nil
}
