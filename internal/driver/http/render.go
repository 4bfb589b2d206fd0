package httpdriver

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// renderRequest writes req as HTTP/1.1 sends it, once, for perflab's own
// client to send as it is (conn.go, loop.go): the request line with the
// URL's path and query as given, Host, the headers in the order of their
// names, Content-Length, and body. It sends what net/http would for the
// same request: the headers net/http writes itself (Host, Content-Length,
// Transfer-Encoding, Trailer) are taken from the request, not its Header;
// a POST, PUT or PATCH without a body says Content-Length: 0.
func renderRequest(req *http.Request, body []byte) []byte {
	var b strings.Builder
	b.Grow(256 + len(body))
	b.WriteString(req.Method)
	b.WriteByte(' ')
	b.WriteString(req.URL.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	b.WriteString(host)
	b.WriteString("\r\n")
	names := make([]string, 0, len(req.Header))
	for name := range req.Header {
		if !ownHeader(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range req.Header[name] {
			b.WriteString(name)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	if len(body) > 0 || wantsLength(req.Method) {
		b.WriteString("Content-Length: ")
		b.WriteString(strconv.Itoa(len(body)))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return []byte(b.String())
}

// ownHeader tells whether the client writes the header itself.
func ownHeader(name string) bool {
	for _, own := range []string{"Host", "Content-Length", "Transfer-Encoding", "Trailer"} {
		if strings.EqualFold(name, own) {
			return true
		}
	}
	return false
}

// wantsLength tells whether a request of method says its length even
// with no body, as net/http does.
func wantsLength(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// closesEach tells whether req asks the server to close the connection
// after its answer (Connection: close): then no connection is reused.
func closesEach(req *http.Request) bool {
	for _, v := range req.Header.Values("Connection") {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "close") {
				return true
			}
		}
	}
	return false
}
