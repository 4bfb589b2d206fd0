package promql

import (
	"io"
)

// Limits on the texts kept from a response.
const (
	maxErrorType = 64
	maxError     = 200
)

// answer is what a Prometheus API query response says, as far as the
// driver cares: status, errorType and error, VictoriaMetrics' isPartial,
// data.resultType, and how many series and points data.result holds. A
// series is an object in result; its points are its "values" and
// "histograms", plus one for "value" and one for "histogram". A scalar or
// string result is no series and one point. When a key repeats, the last
// one counts, as with encoding/json.
type answer struct {
	status     []byte
	errorType  []byte
	error      []byte
	partial    bool
	resultType []byte
	series     int64
	points     int64
}

// parse reads one response from s. The byte buffers are reused.
func (a *answer) parse(s *scanner) error {
	a.status, a.errorType, a.error = a.status[:0], a.errorType[:0], a.error[:0]
	a.partial, a.resultType, a.series, a.points = false, a.resultType[:0], 0, 0
	var kb [64]byte
	more, err := s.open('{', '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(kb[:0]); err != nil {
			break
		}
		switch string(k) {
		case "status":
			a.status, err = stringValue(s, a.status[:0], 32)
		case "errorType":
			a.errorType, err = stringValue(s, a.errorType[:0], maxErrorType)
		case "error":
			a.error, err = stringValue(s, a.error[:0], maxError)
		case "isPartial":
			a.partial, err = boolValue(s)
		case "data":
			err = a.data(s)
		default:
			err = s.skip(1)
		}
		if err == nil {
			more, err = s.next('}')
		}
	}
	if err != nil {
		return err
	}
	if _, ok := s.peek(); ok {
		return s.failure() // more after the object
	}
	if s.err != io.EOF {
		return s.err
	}
	return nil
}

// stringValue takes a value: a string's text (unescaped, cut at limit), or
// nothing for any other kind of value.
func stringValue(s *scanner, dst []byte, limit int) ([]byte, error) {
	if c, ok := s.peek(); !ok || c != '"' {
		return dst[:0], s.skip(1)
	}
	raw, err := s.str(dst, limit)
	return unescape(raw), err
}

// boolValue takes a value: true only for the literal true.
func boolValue(s *scanner) (bool, error) {
	c, ok := s.peek()
	if !ok || c != 't' && c != 'f' {
		return false, s.skip(1)
	}
	w, err := s.literal()
	return w == "true", err
}

func (a *answer) data(s *scanner) error {
	a.resultType, a.series, a.points = a.resultType[:0], 0, 0
	if c, ok := s.peek(); !ok || c != '{' {
		return s.skip(1)
	}
	var kb [64]byte
	more, err := s.open('{', '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(kb[:0]); err != nil {
			break
		}
		switch string(k) {
		case "resultType":
			a.resultType, err = stringValue(s, a.resultType[:0], 16)
		case "result":
			a.series, a.points, err = result(s)
		default:
			err = s.skip(2)
		}
		if err == nil {
			more, err = s.next('}')
		}
	}
	return err
}

// result takes data.result and counts its series and points.
func result(s *scanner) (series, points int64, err error) {
	if c, ok := s.peek(); !ok || c != '[' {
		return 0, 0, s.skip(2)
	}
	other := 0
	more, err := s.open('[', ']')
	for more && err == nil {
		if c, _ := s.peek(); c == '{' {
			var n int64
			n, err = seriesPoints(s)
			series++
			points += n
		} else {
			err = s.skip(3)
			other++
		}
		if err == nil {
			more, err = s.next(']')
		}
	}
	if series == 0 && other > 0 {
		points = 1 // a scalar or string: [time, "value"]
	}
	return series, points, err
}

// seriesPoints takes one series object and counts its points.
func seriesPoints(s *scanner) (int64, error) {
	var value, values, histogram, histograms int64
	var kb [64]byte
	more, err := s.open('{', '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(kb[:0]); err != nil {
			break
		}
		switch string(k) {
		case "value":
			value, err = isArray(s)
		case "histogram":
			histogram, err = isArray(s)
		case "values":
			values, err = count(s)
		case "histograms":
			histograms, err = count(s)
		default:
			err = s.skip(4)
		}
		if err == nil {
			more, err = s.next('}')
		}
	}
	return value + values + histogram + histograms, err
}

// isArray takes a value: 1 if it is an array, else 0.
func isArray(s *scanner) (int64, error) {
	c, ok := s.peek()
	n := int64(0)
	if ok && c == '[' {
		n = 1
	}
	return n, s.skip(4)
}

// count takes a value: the number of elements if it is an array, else 0.
func count(s *scanner) (int64, error) {
	if c, ok := s.peek(); !ok || c != '[' {
		return 0, s.skip(4)
	}
	n := int64(0)
	more, err := s.open('[', ']')
	for more && err == nil {
		if err = s.skip(5); err == nil {
			n++
			more, err = s.next(']')
		}
	}
	return n, err
}
