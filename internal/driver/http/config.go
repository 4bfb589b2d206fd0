package httpdriver

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
)

// The protocols Config.Proto accepts.
const (
	ProtoAuto = "auto" // HTTP/1.1 for http://; ALPN h2 or http/1.1 for https://
	ProtoH1   = "h1"   // HTTP/1.1 only
	ProtoH2   = "h2"   // HTTP/2 over TLS; fails unless the server picks h2 by ALPN
	ProtoH2C  = "h2c"  // HTTP/2 over cleartext TCP with prior knowledge
)

// UserAgent is sent unless Config.Header sets User-Agent (an empty value
// sends none).
const UserAgent = dial.UserAgent

// maxRedirects bounds Config.FollowRedirects.
const maxRedirects = 30

// DefaultTimeout bounds one request when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config describes the one request a Driver sends, over and over.
type Config struct {
	URL     string
	Method  string      // default GET
	Header  http.Header // a "Host" entry sets the Host header
	Body    []byte
	Timeout time.Duration // whole request: connect, headers and body; 0 means DefaultTimeout

	// Proto is ProtoAuto (the default when empty), ProtoH1, ProtoH2 or ProtoH2C.
	Proto string

	CAFile             string // PEM bundle trusted instead of the system roots
	InsecureSkipVerify bool   // skip certificate verification; only when asked

	// MaxConns caps connections to the host. 0 means no cap: with HTTP/1.1
	// every concurrent VU keeps its own keep-alive connection; HTTP/2
	// multiplexes VUs as streams and opens another connection when the
	// server's stream limit is reached.
	MaxConns int

	Name string // operation name; default "METHOD path"

	// ExpectStatus is the final statuses that count as a success, as
	// ParseStatusSet reads them ("200-299,304"); "" is DefaultExpectStatus.
	ExpectStatus string
	// FollowRedirects is how many redirects a request follows (301, 302,
	// 303, 307, 308 with a Location); 0 follows none, and a redirect is
	// the answer.
	FollowRedirects int

	viaLoop bool // tests only: Do runs through the closed model's loop (loop.go)
}

// withDefaults fills in every default in one place.
func (c Config) withDefaults() Config {
	if c.Method == "" {
		c.Method = http.MethodGet
	}
	if c.Proto == "" {
		c.Proto = ProtoAuto
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Name == "" {
		path := "/"
		if u, err := url.Parse(c.URL); err == nil && u.EscapedPath() != "" {
			path = u.EscapedPath()
		}
		c.Name = c.Method + " " + path
	}
	return c
}

// Validate reports every problem with c at once; nil means New will accept it.
func (c Config) Validate() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	scheme, err := c.checkURL()
	if err != nil {
		errs = append(errs, err)
	}
	if c.Method != "" && !httpguts.ValidHeaderFieldName(c.Method) {
		add("method", "method %q is not a valid HTTP token", c.Method)
	}
	for name, values := range c.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			add("headers", "header name %q is not valid", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				add("headers", "header %q: value %q is not valid", name, v)
			}
		}
	}
	switch c.Proto {
	case "", ProtoAuto, ProtoH1:
	case ProtoH2:
		if scheme == "http" {
			add("proto", "proto h2 needs an https:// url (use h2c for cleartext HTTP/2)")
		}
	case ProtoH2C:
		if scheme == "https" {
			add("proto", "proto h2c needs an http:// url (use h2 for HTTP/2 over TLS)")
		}
	default:
		add("proto", "proto %q is unknown (want auto, h1, h2 or h2c)", c.Proto)
	}
	if c.Timeout < 0 {
		add("timeout", "timeout %v is negative", c.Timeout)
	}
	if c.MaxConns < 0 {
		add("max_conns", "max_conns %d is negative", c.MaxConns)
	}
	if _, err := ParseStatusSet(c.ExpectStatus); err != nil {
		add("expect_status", "%v", err)
	}
	if c.FollowRedirects < 0 || c.FollowRedirects > maxRedirects {
		add("follow_redirects", "follow_redirects %d is not within 0-%d", c.FollowRedirects, maxRedirects)
	}
	if c.CAFile != "" {
		if _, err := dial.LoadCA(c.CAFile); err != nil {
			errs = append(errs, driver.WithKey("ca_file", err))
		}
	}
	return errs
}

// checkURL checks c.URL and returns its scheme.
func (c Config) checkURL() (string, error) {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return "", driver.ParamErrorf("url", "url is required")
	case !strings.Contains(c.URL, "://"):
		// 127.0.0.1:8080 parses as an error, localhost:8080 as scheme
		// "localhost": neither message says what is missing.
		return "", driver.ParamErrorf("url", "url %q has no scheme: write http://%s (or https://)", c.URL, c.URL)
	case err != nil:
		return "", driver.ParamErrorf("url", "cannot parse url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", driver.ParamErrorf("url", "url %q: scheme must be http or https", secret.URL(c.URL))
	case u.Host == "":
		return "", driver.ParamErrorf("url", "url %q: host is missing", secret.URL(c.URL))
	case driver.BadPort(u) != "":
		return "", driver.ParamErrorf("url", "url %q: %s", secret.URL(c.URL), driver.BadPort(u))
	}
	return u.Scheme, nil
}

// newTemplate builds the request every Do copies. Header is cloned so the
// caller may reuse its map; a Host entry moves to Request.Host, the only
// place net/http reads it from; User-Agent defaults to UserAgent; user info
// in the URL becomes basic authorization, as curl and net/http's Client do.
func newTemplate(c Config) (*http.Request, error) {
	req, err := http.NewRequest(c.Method, c.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot build request: %w", err)
	}
	req.Header = c.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if u := req.URL.User; u != nil { // net/http's Client does this, its Transport not
		if req.Header.Get("Authorization") == "" {
			pass, _ := u.Password()
			req.SetBasicAuth(u.Username(), pass)
		}
		req.URL.User = nil
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", UserAgent) // the same on both clients
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	if len(c.Body) > 0 { // equivalent mutant: >= 0; without a body Body stays nil, so GetBody is never called
		body := c.Body
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return &bodyReader{b: body}, nil }
	}
	return req, nil
}
