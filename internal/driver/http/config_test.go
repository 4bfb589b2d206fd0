package httpdriver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/perflab/perflab/internal/stats"
)

func TestValidateListsEveryProblem(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    Config
		want []string // one substring per expected problem
	}{
		{"valid", Config{URL: "http://127.0.0.1:8080/x"}, nil},
		{"valid h2c", Config{URL: "http://127.0.0.1/", Proto: ProtoH2C, Method: "PURGE"}, nil},
		{"valid h2", Config{URL: "https://127.0.0.1/", Proto: ProtoH2, Timeout: time.Second, MaxConns: 4}, nil},
		{"empty", Config{}, []string{"url is required"}},
		{
			"everything wrong",
			Config{
				URL: "ftp://127.0.0.1/", Proto: "h3", Timeout: -time.Second, MaxConns: -1,
				CAFile: filepath.Join(t.TempDir(), "missing.pem"), Method: "GE T",
				Header: http.Header{"Bad Name": {"v"}, "X-Ok": {"line\nbreak"}},
			},
			[]string{"scheme must be http or https", `proto "h3" is unknown`, "timeout -1s is negative",
				"max_conns -1 is negative", "cannot read ca file", `method "GE T"`,
				`header name "Bad Name"`, `header "X-Ok": value`},
		},
		{"h2c over https", Config{URL: "https://127.0.0.1/", Proto: ProtoH2C}, []string{"h2c needs an http:// url"}},
		{"h2 over http", Config{URL: "http://127.0.0.1/", Proto: ProtoH2}, []string{"h2 needs an https:// url"}},
		{"no host", Config{URL: "http:///path"}, []string{"host is missing"}},
		{"unparsable", Config{URL: "http://[::1"}, []string{"cannot parse url"}},
		{"no scheme", Config{URL: "127.0.0.1:8080/x"}, []string{`url "127.0.0.1:8080/x" has no scheme: write http://127.0.0.1:8080/x`}},
		{"no scheme, a name", Config{URL: "localhost:8080"}, []string{`url "localhost:8080" has no scheme: write http://localhost:8080`}},
		{"CA without certificates", Config{URL: "https://127.0.0.1/", CAFile: notPEM}, []string{"no PEM certificates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.c.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d: %v", len(errs), len(tc.want), errs)
			}
			all := fmt.Sprint(errs)
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q lack %q", all, w)
				}
			}
			d, err := New(tc.c)
			if err == nil {
				_ = d.Close()
			}
			if (err == nil) != (tc.want == nil) {
				t.Errorf("New error %v, want error: %v", err, tc.want != nil)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	for url, want := range map[string]string{
		"http://127.0.0.1":            "GET /",
		"http://127.0.0.1/a/b?q=1":    "GET /a/b",
		"http://127.0.0.1/with%20sp/": "GET /with%20sp/",
	} {
		c := Config{URL: url}.withDefaults()
		if c.Name != want || c.Timeout != DefaultTimeout || c.Proto != ProtoAuto {
			t.Errorf("%s: defaults %+v, want name %q", url, c, want)
		}
	}
}

// timeoutErr is a net.Error that timed out.
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
		{"handshake", &dial.HandshakeError{Err: errors.New("tls: first record does not look like a TLS handshake")}, live, stats.TLS, "tls: first record does not look like a TLS handshake"},
		{"not h2", urlErr(errNotH2), live, stats.Protocol, "server did not negotiate h2 by ALPN"},
		{"eof", urlErr(io.EOF), live, stats.Protocol, "EOF"},
		{"long", errors.New(strings.Repeat("x", maxMessage+300)), live, stats.Protocol, strings.Repeat("x", maxMessage-3) + "..."},
		{"at the limit", errors.New(strings.Repeat("x", maxMessage)), live, stats.Protocol, strings.Repeat("x", maxMessage)}, // issue 18
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, msg := Classify(tc.err, tc.parent)
			if class != tc.class || msg != tc.msg {
				t.Errorf("got %v %q, want %v %q", class, msg, tc.class, tc.msg)
			}
		})
	}
}
