package dial

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: err} }
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name   string
		err    error
		parent context.Context
		class  stats.Class
		msg    string
	}{
		{"nil", nil, live, stats.OK, ""},
		{"refused", urlErr(refused), live, stats.Connect, "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), live, stats.Connect, "read: connection reset by peer"},
		// issue 18: any failed dial is Connect; a failed read is not
		{"dial", urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("socket: too many open files")}), live, stats.Connect, "dial tcp: socket: too many open files"},
		{"read", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("use of closed network connection")}, live, stats.Protocol, "read tcp: use of closed network connection"},
		{"parent done", urlErr(context.Canceled), done, stats.Interrupted, "context canceled"},
		{"parent done, other error", urlErr(io.ErrUnexpectedEOF), done, stats.Interrupted, "unexpected EOF"},
		{"canceled", context.Canceled, nil, stats.Interrupted, "context canceled"},
		{"deadline", urlErr(context.DeadlineExceeded), live, stats.Timeout, "context deadline exceeded"},
		{"net timeout", urlErr(timeoutErr{}), live, stats.Timeout, "i/o timeout"},
		{"dns", urlErr(&net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}), live, stats.DNS, "lookup nope.invalid: no such host"},
		{"x509", urlErr(x509.UnknownAuthorityError{}), live, stats.TLS, "x509: certificate signed by unknown authority"},
		{"tls alert", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, live, stats.TLS, "remote error: tls: bad certificate"},
		{"handshake", &HandshakeError{Err: errors.New("tls: first record does not look like a TLS handshake")}, live, stats.TLS, "tls: first record does not look like a TLS handshake"},
		{"not h2", urlErr(errors.New("server did not negotiate h2 by ALPN")), live, stats.Protocol, "server did not negotiate h2 by ALPN"},
		{"eof", urlErr(io.EOF), live, stats.Protocol, "EOF"},
		{"long", errors.New(strings.Repeat("x", driver.MaxMessage+300)), live, stats.Protocol, strings.Repeat("x", driver.MaxMessage-3) + "..."},
		{"at the limit", errors.New(strings.Repeat("x", driver.MaxMessage)), live, stats.Protocol, strings.Repeat("x", driver.MaxMessage)}, // issue 18
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, msg := Classify(tc.err, tc.parent)
			if class != tc.class || msg != tc.msg {
				t.Errorf("got %v %q, want %v %q", class, msg, tc.class, tc.msg)
			}
		})
	}
}
