package httpdriver

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
)

// perflab's own HTTP/1.1 client serves HTTP/1.1 with a connection per
// VU (plain http://, or https:// with proto h1): through event loops in
// the closed model (loop.go), through the VU's goroutine in the open
// model, over TLS and when redirects are followed (conn.go). Both send a
// request rendered once (render.go) and read answers with one parser
// (h1parse.go) under one set of rules (rules.go). HTTP/2, ALPN
// negotiation and shared pools go through net/http (nethttp.go).

// ownsH1 tells whether c's requests go through perflab's own client.
func ownsH1(c Config) bool {
	u, err := url.Parse(c.URL)
	if err != nil || c.MaxConns != 0 {
		return false
	}
	return c.Proto == ProtoH1 || (c.Proto == ProtoAuto && u.Scheme == "http")
}

// h1Template is what every VU's client and every loop of a Driver is
// built from.
type h1Template struct {
	first     h1Hop         // the configured request
	host      string        // first's host, to resolve at each dial (loops)
	port      uint16        // first's port; 0: none a socket takes (loops)
	dns       *net.Resolver // the process's, as it was when the driver was made
	noBody    bool          // HEAD: answers have no body
	closeEach bool          // the request says "Connection: close": no connection is reused
	timeout   time.Duration
	slack     time.Duration // how much later than its timeout a request may fail
	dl        *dial.Dialer
	d         *Driver
}

// h1Hop is one request perflab's client sends: the configured one, or
// one a redirect asked for.
type h1Hop struct {
	req    []byte // rendered: line, headers, body
	method string
	url    *url.URL
	body   []byte
	origin string // scheme://host:port: a connection serves one
	addr   string // host:port
	tls    bool
}

// newH1Template renders the configured request once.
func newH1Template(d *Driver, dl *dial.Dialer) *h1Template {
	t := &h1Template{
		noBody: d.tmpl.Method == http.MethodHead, closeEach: closesEach(d.tmpl),
		timeout: d.timeout, slack: max(d.timeout/deadlineSlack, time.Millisecond),
		dns: net.DefaultResolver, dl: h1Dialer(dl), d: d,
	}
	t.first = newHop(d.tmpl, d.body)
	t.host = d.tmpl.URL.Hostname()
	if p, err := strconv.ParseUint(d.tmpl.URL.Port(), 10, 16); err == nil {
		t.port = uint16(p)
	} else if d.tmpl.URL.Port() == "" {
		t.port = 80
	}
	return t
}

// h1Dialer is dl offering HTTP/1.1 alone by ALPN: a redirect from
// http:// to https:// must not let the server pick h2.
func h1Dialer(dl *dial.Dialer) *dial.Dialer {
	own := *dl
	if dl.TLS != nil {
		own.TLS = dl.TLS.Clone()
		own.TLS.NextProtos = []string{"http/1.1"}
	}
	own.NeedALPN, own.ErrALPN = "", nil
	return &own
}

// deadlineSlack is how much later than asked a request's deadline may
// fall: 1/64 of its timeout (h1Client.arm, the loops' look at the clock).
const deadlineSlack = 64

// newHop renders req with body.
func newHop(req *http.Request, body []byte) h1Hop {
	addr := canonicalAddr(req.URL)
	return h1Hop{req: renderRequest(req, body), method: req.Method, url: req.URL, body: body,
		origin: req.URL.Scheme + "://" + addr, addr: addr, tls: req.URL.Scheme == "https"}
}

// canonicalAddr is u's host:port, with the scheme's default port if none.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// redirect is the hop an answer of status, with Location location,
// sends a request of method and body at from on to (nextRequest), or nil.
func (d *Driver) redirect(from *url.URL, method string, body []byte, status int, location []byte, followed int) *h1Hop {
	req, body := d.nextRequest(from, method, body, status, string(location), followed)
	if req == nil {
		return nil
	}
	h := newHop(req, body)
	return &h
}

// nextRequest is the request, and its body, that an answer of status
// with Location location sends a request of method and body at from on
// to, on either path: nil when it is no redirect, has no Location (or one
// not http or https), or the request has followed Config.FollowRedirects
// already. As net/http's client does, a 301, 302 or 303 goes on as a GET
// (a HEAD stays a HEAD) without a body, a 307 or 308 as it was. Credentials
// and the plan's Host go to the configured host alone.
func (d *Driver) nextRequest(from *url.URL, method string, body []byte, status int, location string, followed int) (*http.Request, []byte) {
	switch {
	case followed >= d.follow || location == "":
		return nil, nil
	case status != 301 && status != 302 && status != 303 && status != 307 && status != 308:
		return nil, nil
	}
	next, err := from.Parse(location)
	if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
		return nil, nil
	}
	req := d.tmpl.Clone(d.tmpl.Context())
	req.URL, req.Host = next, ""
	if next.Host == d.tmpl.URL.Host {
		req.Host = d.tmpl.Host
	} else {
		dropCredentials(req.Header)
	}
	if status <= 303 {
		if method != http.MethodHead {
			method = http.MethodGet
		}
		body = nil
	}
	req.Method = method
	if len(body) == 0 {
		req.ContentLength, req.GetBody = 0, nil
	}
	return req, body
}

// dropCredentials removes the sensitive headers from h, for a request to
// another host: credentials go to no host they were not given for.
func dropCredentials(h http.Header) {
	for name := range h {
		if secret.SensitiveName(name) {
			h.Del(name)
		}
	}
}
