package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The text format is read by a scanner that looks only at the families a
// Scraper reports and skims every other line, checking its shape without
// building anything: a 1,000-line /metrics costs about 0.16 ms and six
// allocations, where expfmt's parser took 1.8 ms and 34,000 allocations
// (1.2 MB) per sample, every second, in the process that paces the load
// (BenchmarkRead). Lines it does not know how to skim (a quoted UTF-8
// metric name) send the whole body to expfmt instead. It assigns samples
// to families as expfmt does: a family exists once a TYPE or HELP line or
// a sample names it, and a name's _sum, _count (and _bucket) samples belong
// to the summary (histogram) of the base name when there is one.

// errFallback says the scanner met syntax it leaves to expfmt.
var errFallback = errors.New("syntax for expfmt")

// family is what the scanner gathers of one family a wanted name can be
// read from.
type family struct {
	seen    bool   // a TYPE, HELP or sample line named it
	kind    string // the TYPE line's type; "" for untyped
	samples int    // its samples, all series
	value   float64
	sum     float64 // of a summary or histogram: its _sum samples
	count   float64 // of a summary or histogram: its _count samples
}

// textReader reads the wanted names from a text exposition.
type textReader struct {
	want     []string
	families map[string]*family // every name whose samples a wanted name may need, by name
}

// newTextReader prepares a reader of want: the families of those names,
// and, for names ending in _count or _sum, of the base names, with the
// names of their samples.
func newTextReader(want []string) *textReader {
	t := &textReader{want: want, families: map[string]*family{}}
	for _, name := range want {
		t.track(name)
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				t.track(base)
			}
		}
	}
	return t
}

// track makes name's family and those its samples' names would open known.
func (t *textReader) track(name string) {
	for _, n := range []string{name, name + "_sum", name + "_count", name + "_bucket"} {
		if t.families[n] == nil {
			t.families[n] = &family{}
		}
	}
}

// read scans body; t then answers for the wanted names (a reading).
func (t *textReader) read(body []byte) (reading, error) {
	for _, f := range t.families {
		*f = family{}
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		return nil, errors.New("unexpected end of input: no newline after the last line")
	}
	for n := 1; len(body) > 0; n++ {
		i := bytes.IndexByte(body, '\n')
		line := bytes.TrimLeft(body[:i], " \t")
		body = body[i+1:]
		var err error
		switch {
		case len(line) == 0:
		case line[0] == '#':
			err = t.comment(line)
		case line[0] == '{':
			err = errFallback
		default:
			err = t.sample(line)
		}
		if errors.Is(err, errFallback) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("text format parsing error in line %d: %w", n, err)
		}
	}
	return t, nil
}

// comment reads a TYPE or HELP line of a tracked family.
func (t *textReader) comment(line []byte) error {
	keyword, rest := nextField(line[1:])
	name, rest := nextField(rest)
	if len(name) == 0 || (string(keyword) != "TYPE" && string(keyword) != "HELP") {
		return nil // another comment
	}
	f := t.families[string(name)]
	if string(keyword) == "HELP" {
		if f != nil {
			f.seen = true
		}
		return nil
	}
	kind, rest := nextField(rest)
	if extra, _ := nextField(rest); len(extra) > 0 {
		return fmt.Errorf("TYPE line %q has more than a name and a type", line)
	}
	switch string(kind) {
	case "":
		return nil // expfmt lets it pass
	case "counter", "gauge", "untyped", "summary", "histogram", "gaugehistogram":
	default:
		return fmt.Errorf("unknown metric type %q", kind)
	}
	if f != nil {
		f.seen = true
		if string(kind) != "untyped" {
			f.kind = string(kind)
		}
	}
	return nil
}

// sample reads one sample line: it checks its shape, and adds its value
// to its family when that family is tracked.
func (t *textReader) sample(line []byte) error {
	name, rest, err := splitName(line)
	if err != nil {
		return err
	}
	value, err := valueField(rest)
	if err != nil {
		return fmt.Errorf("metric %s: %w", name, err)
	}
	f, part := t.familyOf(name)
	if f == nil {
		return nil
	}
	v, err := strconv.ParseFloat(string(value), 64)
	if err != nil {
		return fmt.Errorf("metric %s: value %q is not a number", name, value)
	}
	f.seen = true
	f.samples++
	switch part {
	case "_sum":
		f.sum += v
	case "_count":
		f.count += v
	case "":
		f.value += v
	}
	return nil
}

// familyOf returns the tracked family a sample called name belongs to,
// with the part of a summary or histogram it is ("_sum", "_count",
// "_bucket"; "" for the family's own name); nil when it is not tracked.
func (t *textReader) familyOf(name []byte) (*family, string) {
	f := t.families[string(name)]
	if f == nil {
		return nil, ""
	}
	if f.seen {
		return f, ""
	}
	for _, suffix := range []string{"_sum", "_count", "_bucket"} {
		base, ok := bytes.CutSuffix(name, []byte(suffix))
		if !ok {
			continue
		}
		b := t.families[string(base)]
		if b == nil || !b.seen {
			continue
		}
		if b.kind == "histogram" || b.kind == "gaugehistogram" || (b.kind == "summary" && suffix != "_bucket") {
			return b, suffix
		}
	}
	return f, ""
}

// value is the reading of a wanted name, as expfmt's families would give
// it: the sum of the family's series for a counter, gauge or untyped
// family; for a name ending in _count or _sum, that of the summary or
// histogram of the base name (not of a gauge histogram); false when the
// exposition has neither.
func (t *textReader) value(name string) (float64, bool) {
	if f := t.families[name]; f.samples > 0 && (f.kind == "" || f.kind == "counter" || f.kind == "gauge") {
		return f.value, true
	}
	for _, suffix := range []string{"_count", "_sum"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if b := t.families[base]; b.samples > 0 && (b.kind == "summary" || b.kind == "histogram") {
			if suffix == "_count" {
				return b.count, true
			}
			return b.sum, true
		}
		return 0, false
	}
	return 0, false
}

// counter says whether the wanted name only grows: a family of TYPE
// counter, or the count or sum of a summary or histogram.
func (t *textReader) counter(name string) bool {
	if f := t.families[name]; f.samples > 0 {
		return f.kind == "counter"
	}
	for _, suffix := range []string{"_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			b := t.families[base]
			return b.samples > 0 && (b.kind == "summary" || b.kind == "histogram")
		}
	}
	return false
}

// splitName splits a sample line into its metric name and what follows
// its labels, checking the labels' syntax.
func splitName(line []byte) (name, rest []byte, err error) {
	i := 0
	for i < len(line) && isNameByte(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return nil, nil, fmt.Errorf("invalid metric name in %q", line)
	}
	name, rest = line[:i], line[i:]
	labels := bytes.TrimLeft(rest, " \t")
	if len(labels) == 0 || labels[0] != '{' {
		return name, rest, nil
	}
	rest, err = skipLabels(labels[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("metric %s: %w", name, err)
	}
	return name, rest, nil
}

// skipLabels skips label pairs up to and past the closing brace.
func skipLabels(b []byte) ([]byte, error) {
	for {
		b = bytes.TrimLeft(b, " \t")
		if len(b) > 0 && b[0] == '}' {
			return b[1:], nil
		}
		if len(b) > 0 && b[0] == '"' {
			return nil, errFallback // a quoted label or metric name
		}
		i := 0
		for i < len(b) && isNameByte(b[i], i == 0) && b[i] != ':' {
			i++
		}
		if i == 0 {
			return nil, errors.New("invalid label name")
		}
		b = bytes.TrimLeft(b[i:], " \t")
		if len(b) < 2 || b[0] != '=' {
			return nil, errors.New("expected '=' after a label name")
		}
		b = bytes.TrimLeft(b[1:], " \t")
		var err error
		if b, err = skipQuoted(b); err != nil {
			return nil, err
		}
		b = bytes.TrimLeft(b, " \t")
		if len(b) > 0 && b[0] == ',' {
			b = b[1:]
		} else if len(b) == 0 || b[0] != '}' {
			return nil, errors.New("expected ',' or '}' after a label value")
		}
	}
}

// skipQuoted skips a double-quoted label value with its escapes.
func skipQuoted(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != '"' {
		return nil, errors.New("expected a quoted label value")
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			if i+1 == len(b) || (b[i+1] != '\\' && b[i+1] != '"' && b[i+1] != 'n') {
				return nil, errors.New("invalid escape in a label value")
			}
			i++
		case '"':
			return b[i+1:], nil
		}
	}
	return nil, errors.New("unterminated label value")
}

// valueField returns the value of what follows a sample's name and labels:
// blanks, the value, optionally blanks and an integer timestamp.
func valueField(rest []byte) ([]byte, error) {
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
		return nil, errors.New("expected a blank and a value after the name and labels")
	}
	value, rest := nextField(rest)
	ts, rest := nextField(rest)
	extra, _ := nextField(rest)
	switch {
	case len(value) == 0:
		return nil, errors.New("no value")
	case len(extra) > 0:
		return nil, fmt.Errorf("unexpected %q after the value and timestamp", extra)
	case len(ts) > 0 && !isInteger(ts):
		return nil, fmt.Errorf("timestamp %q is not an integer", ts)
	}
	return value, nil
}

// nextField skips blanks and returns the next blank-separated token and
// what follows it.
func nextField(b []byte) (field, rest []byte) {
	b = bytes.TrimLeft(b, " \t")
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	return b[:i], b[i:]
}

func isInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}
