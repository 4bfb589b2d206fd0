package httpdriver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The event loop's HTTP/1.1 response parser (loop.go). It reads a response
// as its bytes come, line by line and then the body, from the connection's
// read buffer, and keeps nothing of it but its status, its reason phrase
// when the status is an error, and what it needs to find the response's
// end: the body goes through the VU's bodySink, counted, never held whole.
// Only one line must fit in the read buffer; a server's headers are
// bounded in all by maxHeaderBytes.

// maxHeaderBytes bounds a response's status line and headers together.
const maxHeaderBytes = 64 << 10

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

// h1Parser parses the responses of one connection, one at a time.
type h1Parser struct {
	phase   h1Phase
	noBody  bool // the request was HEAD: no response has a body
	status  int
	reason  string // kept when status >= 400
	length  int64  // Content-Length, or -1
	chunked bool
	close   bool // the server closes the connection after this response
	http10  bool // an HTTP/1.0 response: closes unless it says keep-alive
	keep    bool // a "Connection: keep-alive" token
	got     int  // bytes of this response parsed so far: status line, headers, body
	header  int  // bytes of status line and headers
	remain  int64
	sink    *bodySink // where the body goes
}

// Errors of a response that is not HTTP/1.1.
var (
	errHeaderTooLarge = fmt.Errorf("response headers larger than %d bytes", maxHeaderBytes)
	errLineTooLong    = errors.New("response line longer than the read buffer")
)

// reset readies p for the next response.
func (p *h1Parser) reset() {
	*p = h1Parser{noBody: p.noBody, length: -1, sink: p.sink}
}

// started reports whether any byte of the current response was parsed.
func (p *h1Parser) started() bool { return p.got > 0 }

// feed parses what it can of b, the bytes read and not yet parsed,
// writing body bytes to p.sink. It returns how many bytes it used: a partial
// line is left for the next feed. The response has ended when p.phase is
// phaseDone; the bytes after it are the next response's.
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
		p.got += n
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
		return 0, nil
	}
	line := bytes.TrimSuffix(b[:i], []byte{'\r'})
	n := i + 1
	if p.phase <= phaseHeader {
		if p.header += n; p.header > maxHeaderBytes {
			return n, errHeaderTooLarge
		}
	}
	switch p.phase {
	case phaseStatus:
		return n, p.statusLine(line)
	case phaseHeader:
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
		if len(line) == 0 {
			p.phase = phaseDone
		}
	}
	return n, nil
}

// statusLine reads "HTTP/1.1 200 OK".
func (p *h1Parser) statusLine(line []byte) error {
	rest, ok := bytes.CutPrefix(line, []byte("HTTP/1."))
	if !ok || len(rest) < 5 || rest[1] != ' ' || (len(rest) > 5 && rest[5] != ' ') {
		return fmt.Errorf("malformed HTTP response %q", clipLine(line))
	}
	code, ok := parseUint(rest[2:5], 10)
	if !ok || code < 100 {
		return fmt.Errorf("malformed HTTP status code %q", rest[2:5])
	}
	p.status = int(code)
	p.http10 = rest[0] == '0'
	if code >= 400 && len(rest) > 6 {
		p.reason = string(rest[6:min(len(rest), 6+reasonMax)])
	}
	p.phase = phaseHeader
	return nil
}

// headerLine takes the headers that decide where the response ends.
func (p *h1Parser) headerLine(line []byte) error {
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok {
		return fmt.Errorf("malformed response header line %q", clipLine(line))
	}
	value = bytes.TrimSpace(value)
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, ok := parseUint(value, 10)
		if !ok || (p.length >= 0 && n != p.length) {
			return fmt.Errorf("malformed Content-Length %q", clipLine(value))
		}
		p.length = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		last := value[bytes.LastIndexByte(value, ',')+1:]
		p.chunked = bytes.EqualFold(bytes.TrimSpace(last), []byte("chunked"))
		if !p.chunked {
			p.close = true // RFC 9112 6.3: read until the connection closes
		}
	case bytes.EqualFold(name, []byte("Connection")):
		for rest := value; len(rest) > 0; {
			var tok []byte
			tok, rest, _ = bytes.Cut(rest, []byte{','})
			tok = bytes.TrimSpace(tok)
			p.close = p.close || bytes.EqualFold(tok, []byte("close"))
			p.keep = p.keep || bytes.EqualFold(tok, []byte("keep-alive"))
		}
	}
	return nil
}

// endHeaders decides how the body is framed (RFC 9112 6.3).
func (p *h1Parser) endHeaders() error {
	p.close = p.close || (p.http10 && !p.keep)
	p.sink.reset(p.length, p.status >= 400)
	switch {
	case p.status < 200 && p.status != 101: // an interim answer: the real one follows
		got, header := p.got, p.header
		p.reset()
		p.got, p.header = got, header
	case p.status == 101:
		return errors.New("the server switched protocols (101), which perflab does not follow")
	case p.noBody || p.status == 204 || p.status == 304:
		p.phase = phaseDone
	case p.chunked:
		p.phase = phaseChunkSize
	case p.length > 0:
		p.phase, p.remain = phaseBody, p.length
	case p.length == 0:
		p.phase = phaseDone
	default:
		p.phase, p.close = phaseUntilEOF, true
	}
	return nil
}

// chunkSize reads a chunk-size line, "1a" or "1a;ext=1".
func (p *h1Parser) chunkSize(line []byte) error {
	hex, _, _ := bytes.Cut(line, []byte{';'})
	n, ok := parseUint(bytes.TrimSpace(hex), 16)
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
	default:
		return io.ErrUnexpectedEOF
	}
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
