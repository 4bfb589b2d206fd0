package openaidriver

import (
	"math"
	"net/http"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
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
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dial.New(timeout, nil).Dial, // TCP connect time; TLS is net/http's
		Protocols:           &p,
		DisableCompression:  true,
		MaxIdleConnsPerHost: math.MaxInt32,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: timeout,
	}
}
