package httpdriver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// perflab's HTTP/1.1 response parser, of the closed model's loops
// (loop.go) and of the goroutine VUs (conn.go) alike. It reads a response
// as its bytes come, line by line and then the body, from the
// connection's read buffer, and keeps nothing of it but its status, its
// reason phrase, and what it needs to find the response's end: the body
// goes through the VU's bodySink, counted, never held whole.
//
// It accepts what RFC 9112 asks a client to accept: bare line feeds,
// obs-fold header lines, a Content-Length repeated with one value, chunk
// sizes with leading zeros, empty list elements ("chunked, "); it skips
// interim (1xx) answers; it refuses a version other than HTTP/1.0 and
// HTTP/1.1 and a status outside 100–599. Past a bound (below) an answer
// is a protocol failure that names the bound.

// The bounds of an answer, the same on every path (README, --help).
const (
	// maxLineBytes bounds a status line, header line, chunk-size line or
	// trailer line, with its line break: a line must fit the read buffer.
	maxLineBytes = 8 << 10
	// maxHeaderFields bounds the header fields of one answer.
	maxHeaderFields = 512
	// maxHeaderBytes bounds the status lines and headers of a request's
	// answers together, its interim answers included (net/http's
	// MaxResponseHeaderBytes, set to it).
	maxHeaderBytes = 64 << 10
	// maxTrailerBytes bounds a chunked body's trailers, with the empty
	// line that ends them (net/http's bound: its read buffer).
	maxTrailerBytes = 4 << 10
)

// readBufSize is a loop connection's read buffer: a response line must fit.
const readBufSize = maxLineBytes

// h1Phase is where in a response the parser is.
type h1Phase uint8

const (
	phaseStatus    h1Phase = iota // the status line is next
	phaseHeader                   // a header line, or the empty line ending them
	phaseBody                     // remain bytes of a body of announced length
	phaseChunkSize                // a chunk-size line
	phaseChunkData                // remain bytes of a chunk
	phaseChunkEnd                 // the line break ending a chunk
	phaseTrailer                  // a trailer line, or the empty line ending them
	phaseUntilEOF                 // a body that ends when the connection does
	phaseDone                     // the response has ended
)

// fieldKind is what the last header field decides, for an obs-fold line
// that continues it.
type fieldKind uint8

const (
	fieldNone fieldKind = iota // no field yet: a folded line is dropped
	fieldOther
	fieldLength
	fieldEncoding
	fieldConnection
)

// h1Parser parses the responses of one connection, one at a time.
type h1Parser struct {
	phase    h1Phase
	noBody   bool                  // the request was HEAD: no response has a body
	follow   bool                  // redirects are followed: a 3xx keeps its Location
	keepBody func(status int) bool // keep the start of the body, and the reason phrase; nil: always
	status   int
	reason   string // the reason phrase, when keepBody(status)
	length   int64  // Content-Length, or -1
	chunked  bool   // the last transfer coding is chunked
	encoded  bool   // a Transfer-Encoding came
	close    bool   // the server closes the connection after this response
	http10   bool   // an HTTP/1.0 response: closes unless it says keep-alive
	keep     bool   // a "Connection: keep-alive" token
	switched bool   // a 101: the connection no longer speaks HTTP/1.1
	interim  int    // interim answers skipped
	last     fieldKind
	fields   int   // header fields of this answer
	got      int64 // bytes of the request's answers parsed so far: lines, framing, body
	header   int   // bytes of status lines and headers, interim answers included
	trailer  int   // bytes of trailers
	remain   int64
	sink     *bodySink // where the body goes
	location []byte    // a 3xx's Location, when follow
}

// Errors of an answer that is not HTTP/1.1, or past a bound.
var (
	errHeaderTooLarge  = fmt.Errorf("response headers larger than %d KiB (perflab's bound)", maxHeaderBytes>>10)
	errLineTooLong     = fmt.Errorf("response line longer than %d KiB (perflab's bound)", maxLineBytes>>10)
	errTooManyFields   = fmt.Errorf("response with more than %d header fields (perflab's bound)", maxHeaderFields)
	errTrailerTooLarge = fmt.Errorf("response trailers larger than %d KiB (perflab's bound)", maxTrailerBytes>>10)
)

// reset readies p for the next request's answer.
func (p *h1Parser) reset() {
	*p = h1Parser{noBody: p.noBody, follow: p.follow, keepBody: p.keepBody, length: -1, sink: p.sink, location: p.location[:0]}
}

// started reports whether any byte of the current answer was parsed.
func (p *h1Parser) started() bool { return p.got > 0 }

// feed parses what it can of b, the bytes read and not yet parsed,
// writing body bytes to p.sink. It returns how many bytes it used: a partial
// line is left for the next feed. The response has ended when p.phase is
// phaseDone; the bytes after it are no answer to this request.
func (p *h1Parser) feed(b []byte) (int, error) {
	used := 0
	for used < len(b) && p.phase != phaseDone {
		var (
			n   int
			err error
		)
		switch p.phase {
		case phaseBody, phaseChunkData, phaseUntilEOF:
			n = p.body(b[used:])
		default:
			n, err = p.line(b[used:])
		}
		used += n
		p.got += int64(n)
		if err != nil || n == 0 {
			return used, err
		}
	}
	return used, nil
}

// body takes the body bytes of b that belong to the response.
func (p *h1Parser) body(b []byte) int {
	n := len(b)
	if p.phase != phaseUntilEOF && int64(n) > p.remain {
		n = int(p.remain)
	}
	_, _ = p.sink.Write(b[:n])
	if p.phase == phaseUntilEOF {
		return n
	}
	p.remain -= int64(n)
	if p.remain == 0 {
		if p.phase == phaseBody {
			p.phase = phaseDone
		} else {
			p.phase = phaseChunkEnd
		}
	}
	return n
}

// line takes one whole line of b, if b holds one, and acts on it.
func (p *h1Parser) line(b []byte) (int, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(b) >= maxLineBytes {
			return 0, errLineTooLong
		}
		return 0, nil
	}
	n := i + 1
	if n > maxLineBytes {
		return 0, errLineTooLong
	}
	line := bytes.TrimSuffix(b[:i], []byte{'\r'})
	switch p.phase {
	case phaseStatus, phaseHeader:
		if p.header += n; p.header > maxHeaderBytes {
			return n, errHeaderTooLarge
		}
		if p.phase == phaseStatus {
			return n, p.statusLine(line)
		}
		if len(line) == 0 {
			return n, p.endHeaders()
		}
		return n, p.headerLine(line)
	case phaseChunkSize:
		return n, p.chunkSize(line)
	case phaseChunkEnd:
		if len(line) != 0 {
			return n, errors.New("malformed chunked body: no line break after a chunk")
		}
		p.phase = phaseChunkSize
	case phaseTrailer:
		if p.trailer += n; p.trailer > maxTrailerBytes {
			return n, errTrailerTooLarge
		}
		if len(line) == 0 {
			p.phase = phaseDone
		}
	}
	return n, nil
}

// statusLine reads "HTTP/1.1 200 OK": HTTP/1.0 or HTTP/1.1, a status from
// 100 to 599, and a reason phrase, which may be empty or missing.
func (p *h1Parser) statusLine(line []byte) error {
	rest, ok := bytes.CutPrefix(line, []byte("HTTP/1."))
	if !ok || len(rest) < 5 || rest[1] != ' ' || (len(rest) > 5 && rest[5] != ' ') {
		return fmt.Errorf("malformed HTTP response %q", clipLine(line))
	}
	if rest[0] != '0' && rest[0] != '1' {
		return fmt.Errorf("HTTP version %q is neither HTTP/1.0 nor HTTP/1.1", clipLine(line[:min(len(line), 8)]))
	}
	code, ok := parseUint(rest[2:5], 10)
	if !ok || code < 100 || code > 599 {
		return fmt.Errorf("malformed HTTP status code %q (want 100 to 599)", rest[2:5])
	}
	p.status = int(code)
	p.http10 = rest[0] == '0'
	if len(rest) > 6 && (p.keepBody == nil || p.keepBody(p.status)) {
		p.reason = string(rest[6:min(len(rest), 6+reasonMax)])
	}
	p.phase = phaseHeader
	return nil
}

// headerLine takes the headers that decide where the response ends; a
// line that starts with white space continues the field before it
// (obs-fold, RFC 9112 5.2).
func (p *h1Parser) headerLine(line []byte) error {
	if line[0] == ' ' || line[0] == '\t' {
		return p.fieldValue(p.last, line, true)
	}
	if p.fields++; p.fields > maxHeaderFields {
		return errTooManyFields
	}
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
		return fmt.Errorf("malformed response header line %q", clipLine(line))
	}
	switch {
	case p.follow && p.status/100 == 3 && bytes.EqualFold(name, []byte("Location")):
		p.location = append(p.location[:0], bytes.TrimSpace(value)...)
		p.last = fieldOther
	case bytes.EqualFold(name, []byte("Content-Length")):
		p.last = fieldLength
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		p.last = fieldEncoding
	case bytes.EqualFold(name, []byte("Connection")):
		p.last = fieldConnection
	default:
		p.last = fieldOther
	}
	return p.fieldValue(p.last, value, false)
}

// fieldValue acts on the value of a field of kind k; folded, it continues
// the value before it.
func (p *h1Parser) fieldValue(k fieldKind, value []byte, folded bool) error {
	switch k {
	case fieldLength:
		return p.contentLength(value, folded)
	case fieldEncoding:
		p.encoded = true
		eachToken(value, func(tok []byte) { p.chunked = bytes.EqualFold(tok, []byte("chunked")) })
	case fieldConnection:
		eachToken(value, func(tok []byte) {
			p.close = p.close || bytes.EqualFold(tok, []byte("close"))
			p.keep = p.keep || bytes.EqualFold(tok, []byte("keep-alive"))
		})
	}
	return nil
}

// contentLength reads "5", or a list of one value repeated ("5, 5"), as
// one field or several; leading zeros are allowed.
func (p *h1Parser) contentLength(value []byte, folded bool) error {
	bad := folded && len(bytes.TrimSpace(value)) > 0 // a length does not continue on the next line
	empty := true
	eachToken(value, func(tok []byte) {
		empty = false
		n, ok := parseUint(bytes.TrimLeft(tok, "0"), 10)
		if len(bytes.TrimLeft(tok, "0")) == 0 && len(tok) > 0 {
			n, ok = 0, true
		}
		if !ok || (p.length >= 0 && n != p.length) {
			bad = true
			return
		}
		p.length = n
	})
	if bad || (empty && !folded) {
		return fmt.Errorf("malformed Content-Length %q", clipLine(value))
	}
	return nil
}

// eachToken calls f with each element of a comma-separated list, trimmed,
// the empty ones left out (RFC 9110 5.6.1).
func eachToken(value []byte, f func(tok []byte)) {
	for rest := value; len(rest) > 0; {
		var tok []byte
		tok, rest, _ = bytes.Cut(rest, []byte{','})
		if tok = bytes.TrimSpace(tok); len(tok) > 0 {
			f(tok)
		}
	}
}

// endHeaders decides how the body is framed (RFC 9112 6.3).
func (p *h1Parser) endHeaders() error {
	p.close = p.close || (p.http10 && !p.keep)
	switch {
	case p.status < 200 && p.status != 101: // an interim answer: the real one follows
		got, header, interim := p.got, p.header, p.interim+1
		p.reset()
		p.got, p.header, p.interim = got, header, interim
		return nil
	case p.encoded && p.length >= 0:
		// Both: the coding decides, and the connection is not to be
		// trusted with another request (RFC 9112 6.3, point 3).
		p.close, p.length = true, -1
	}
	p.sink.reset(p.length, p.keepBody == nil || p.keepBody(p.status))
	switch {
	case p.status == 101:
		p.phase, p.close, p.switched = phaseDone, true, true
	case p.noBody || p.status == 204 || p.status == 304:
		p.phase = phaseDone
	case p.encoded && p.chunked:
		p.phase = phaseChunkSize
	case p.encoded: // a coding that is not chunked: the body runs to the end
		p.phase, p.close = phaseUntilEOF, true
	case p.length > 0:
		p.phase, p.remain = phaseBody, p.length
	case p.length == 0:
		p.phase = phaseDone
	default:
		p.phase, p.close = phaseUntilEOF, true
	}
	return nil
}

// chunkSize reads a chunk-size line, "1a", "001a" or "1a;ext=1".
func (p *h1Parser) chunkSize(line []byte) error {
	hex, _, _ := bytes.Cut(line, []byte{';'})
	hex = bytes.TrimSpace(hex)
	digits := bytes.TrimLeft(hex, "0")
	n, ok := parseUint(digits, 16)
	if len(digits) == 0 && len(hex) > 0 {
		n, ok = 0, true
	}
	if !ok {
		return fmt.Errorf("malformed chunk size %q", clipLine(line))
	}
	if n == 0 {
		p.phase = phaseTrailer
		return nil
	}
	p.phase, p.remain = phaseChunkData, n
	return nil
}

// cutShort is an answer the connection's end cut short: where, and how
// many body bytes had come. It is io.ErrUnexpectedEOF to errors.Is.
type cutShort struct {
	where string
}

func (e *cutShort) Error() string { return "answer cut short: the connection ended " + e.where }
func (e *cutShort) Unwrap() error { return io.ErrUnexpectedEOF }

// eof is what the connection's end means for the response: its end, when
// the body runs until then; otherwise an error. pending counts the bytes
// read but not parsed (a line cut short).
func (p *h1Parser) eof(pending int) error {
	switch {
	case p.phase == phaseUntilEOF:
		p.phase = phaseDone
		return nil
	case !p.started() && pending == 0:
		return errServerClosed
	}
	var where string
	switch p.phase {
	case phaseStatus:
		where = fmt.Sprintf("after %d interim answers, before the final one", p.interim)
		if p.interim == 0 {
			where = "in the status line"
		}
	case phaseHeader:
		where = "in the headers"
	case phaseBody:
		where = fmt.Sprintf("in the body, after %d of %d bytes", p.sink.n, p.length)
	case phaseChunkSize, phaseChunkData, phaseChunkEnd:
		where = fmt.Sprintf("in the chunked body, after %d bytes, before its last chunk", p.sink.n)
	default:
		where = "in the trailers, after the last chunk"
	}
	return &cutShort{where: where}
}

// parseUint reads b, digits in base 10 or 16 and nothing else, as a
// number below 2^62; strconv would take a string, which a response's
// bytes would be copied into.
func parseUint(b []byte, base int64) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var d int64
		switch {
		case '0' <= c && c <= '9':
			d = int64(c - '0')
		case base == 16 && 'a' <= c|0x20 && c|0x20 <= 'f':
			d = int64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		n = n*base + d
	}
	return n, true
}

// clipLine is the start of a line for an error message.
func clipLine(b []byte) []byte { return b[:min(len(b), 64)] }
