package s3driver

import (
	"crypto/tls"
	"math"
	"net/http"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
)

const (
	idleConnTimeout = 90 * time.Second
	// writeBufferSize is a connection's write buffer when the load PUTs:
	// fewer syscalls for large bodies. Without PUT it writes requests'
	// headers only, and has readBufferSize: 64 KiB held 60 KiB per
	// connection it never used (2 MiB of s3-get-sizes' 32 VUs). Its read
	// buffer holds a response's headers only: a GET body is read into the
	// VU's buffer (readBufSize, larger), which bufio.Reader fills straight
	// from the connection.
	writeBufferSize = 64 << 10
	readBufferSize  = 4 << 10
)

// newTransport builds the HTTP client every VU shares: HTTP/1.1 only (S3
// servers speak it; AWS S3 has no HTTP/2), keep-alive with no cap on idle
// connections (a VU keeps the connection it used, so N VUs hold N
// connections), no compression (bytes counted are bytes the server sent),
// no proxy from the environment; a large write buffer only when the load
// PUTs. Dials are ours, so each new connection
// knows its TCP connect + TLS handshake time (see timedConn).
func newTransport(d *dial.Dialer, puts bool) *http.Transport {
	writeBuf := readBufferSize
	if puts {
		writeBuf = writeBufferSize
	}
	var p http.Protocols
	p.SetHTTP1(true)
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.Dial,
		DialTLSContext:      d.DialTLS,
		Protocols:           &p,
		DisableCompression:  true,
		MaxIdleConns:        0, // no global cap
		MaxIdleConnsPerHost: math.MaxInt32,
		IdleConnTimeout:     idleConnTimeout,
		WriteBufferSize:     writeBuf,
		ReadBufferSize:      readBufferSize,
	}
}

// newDialer is the dialer of the S3 client: timed TCP, and TLS over
// HTTP/1.1 with the plan's CA and, only when asked, no verification.
func newDialer(s spec, insecure bool) *dial.Dialer {
	return dial.New(s.timeout, &tls.Config{
		InsecureSkipVerify: insecure, //nolint:gosec // only when the plan asks
		RootCAs:            s.caPool,
		NextProtos:         []string{"http/1.1"},
	})
}
