package dial

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/secret"
)

// NewPlainClient returns the net/http client of the drivers that post to
// one endpoint and time no dials of their own (promql, remotewrite):
// keep-alive connections, no compression (bytes counted are bytes on the
// wire), no proxy from the environment, redirects not followed.
func NewPlainClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
			DisableCompression:  true,
			ForceAttemptHTTP2:   true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// UserAgent is what perflab's HTTP requests send as User-Agent unless a
// plan sets one.
const UserAgent = "perflab"

// SplitHeaders turns a plan's headers into the header every request
// copies, and the value of a Host entry, which net/http reads only from
// Request.Host.
func SplitHeaders(headers map[string]string) (h http.Header, host string) {
	h = http.Header{}
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			host = v
			continue
		}
		h.Set(k, v)
	}
	return h, host
}

// DescribeHeaders appends "; headers A: x, B: <redacted>" to b, by name,
// the values of sensitive headers masked; nothing when there are none.
func DescribeHeaders(b *strings.Builder, headers map[string]string) {
	names := make([]string, 0, len(headers))
	for n := range headers {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		sep := ", "
		if i == 0 {
			sep = "; headers "
		}
		v := headers[n]
		if secret.SensitiveName(n) {
			v = "<redacted>"
		}
		fmt.Fprintf(b, "%s%s: %s", sep, n, v)
	}
}

// LoadCA reads a PEM bundle into a pool: the ca file of every driver
// that speaks TLS.
func LoadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read ca file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cannot load ca file %s: no PEM certificates in it", path)
	}
	return pool, nil
}
