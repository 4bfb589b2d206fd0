package promql

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// scanner reads JSON from a stream through a fixed buffer, so a response
// of any size is walked in constant memory. It understands JSON exactly
// enough to find the fields of a Prometheus API response and to count
// series and points; numbers are only checked for their characters.
type scanner struct {
	r    io.Reader
	buf  []byte
	i, n int
	read int64 // bytes read from r
	err  error // the read error that ended the stream; io.EOF at the end
}

func (s *scanner) reset(r io.Reader, buf []byte) {
	*s = scanner{r: r, buf: buf}
}

// more refills the buffer; false at the end of the stream.
func (s *scanner) more() bool {
	if s.err != nil {
		return false
	}
	for {
		n, err := s.r.Read(s.buf)
		s.i, s.n = 0, n
		s.read += int64(n)
		if err != nil {
			s.err = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// failure is the error to report for an unexpected end or bad byte.
func (s *scanner) failure() error {
	if s.err != nil && s.err != io.EOF {
		return s.err
	}
	if s.err == io.EOF && s.i >= s.n {
		return fmt.Errorf("%w: unexpected end after %d bytes", errSyntax, s.read)
	}
	return fmt.Errorf("%w at byte %d", errSyntax, s.read-int64(s.n-s.i))
}

// peek skips whitespace and returns the next byte without taking it.
func (s *scanner) peek() (byte, bool) {
	for {
		for ; s.i < s.n; s.i++ {
			switch c := s.buf[s.i]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, true
			}
		}
		if !s.more() {
			return 0, false
		}
	}
}

// expect skips whitespace and takes c, or fails.
func (s *scanner) expect(c byte) error {
	if b, ok := s.peek(); !ok || b != c {
		return s.failure()
	}
	s.i++
	return nil
}

// str takes a string (s.peek() was '"'), appending its raw content, escapes
// as written, to dst while dst is shorter than limit.
func (s *scanner) str(dst []byte, limit int) ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return dst, err
	}
	escaped := false
	for {
		for ; s.i < s.n; s.i++ {
			c := s.buf[s.i]
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				s.i++
				return dst, nil
			case c < 0x20:
				return dst, s.failure()
			}
			if len(dst) < limit {
				dst = append(dst, c)
			}
		}
		if !s.more() {
			return dst, s.failure()
		}
	}
}

// literal takes a number, true, false or null, and says which word it was
// ("" for a number).
func (s *scanner) literal() (string, error) {
	c, ok := s.peek()
	if !ok {
		return "", s.failure()
	}
	for _, w := range []string{"true", "false", "null"} {
		if c == w[0] {
			for j := range len(w) {
				if b, ok := s.byteAt(); !ok || b != w[j] {
					return "", s.failure()
				}
				s.i++
			}
			return w, s.delimited()
		}
	}
	n := 0
	for ; ; n++ {
		b, ok := s.byteAt()
		if !ok || !isNumberByte(b) {
			break
		}
		s.i++
	}
	if n == 0 {
		return "", s.failure()
	}
	return "", s.delimited()
}

// delimited checks that a literal is not followed by more letters or digits.
func (s *scanner) delimited() error {
	if b, ok := s.byteAt(); ok && (isNumberByte(b) || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z') {
		return s.failure()
	}
	return nil
}

func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

// byteAt returns the next byte, whitespace included, without taking it.
func (s *scanner) byteAt() (byte, bool) {
	if s.i >= s.n && !s.more() {
		return 0, false
	}
	return s.buf[s.i], true
}

// skip takes one value of any kind.
func (s *scanner) skip(depth int) error {
	c, ok := s.peek()
	switch {
	case !ok:
		return s.failure()
	case depth > maxDepth:
		return fmt.Errorf("%w: nested deeper than %d", errSyntax, maxDepth)
	case c == '"':
		_, err := s.str(nil, 0)
		return err
	case c == '{':
		var kb [64]byte
		more, err := s.open('{', '}')
		for more && err == nil {
			if _, err = s.key(kb[:0]); err == nil {
				if err = s.skip(depth + 1); err == nil {
					more, err = s.next('}')
				}
			}
		}
		return err
	case c == '[':
		more, err := s.open('[', ']')
		for more && err == nil {
			if err = s.skip(depth + 1); err == nil {
				more, err = s.next(']')
			}
		}
		return err
	}
	_, err := s.literal()
	return err
}

// open takes the opening bracket of an object or array; more is false when
// it is empty (the closing bracket is taken too).
func (s *scanner) open(opening, closing byte) (more bool, err error) {
	if err := s.expect(opening); err != nil {
		return false, err
	}
	if c, ok := s.peek(); ok && c == closing {
		s.i++
		return false, nil
	}
	return true, nil
}

// key takes an object member's key and the colon after it, returning the
// key's text appended to dst (unescaped; keys longer than 64 bytes are cut).
func (s *scanner) key(dst []byte) ([]byte, error) {
	raw, err := s.str(dst, 64)
	if err != nil {
		return raw, err
	}
	return unescape(raw), s.expect(':')
}

// next takes what follows a member or element: a comma (more is true) or
// the closing bracket.
func (s *scanner) next(closing byte) (more bool, err error) {
	c, ok := s.peek()
	if !ok || c != ',' && c != closing {
		return false, s.failure()
	}
	s.i++
	return c == ',', nil
}

// unescape is the text of a raw JSON string's content: raw itself unless
// it has escapes.
func unescape(raw []byte) []byte {
	for _, c := range raw {
		if c == '\\' {
			var out string
			if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &out) == nil {
				return []byte(out)
			}
			return raw
		}
	}
	return raw
}
