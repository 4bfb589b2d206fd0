// Package slo is the grammar of SLO gates, the thresholds users write in
// a plan's slo lists and with --slo:
//
//	gate       = metric [ "{" label { "," label } "}" ] comparison threshold
//	label      = ( "op" | "workload" ) "=" quoted
//	comparison = "<" | "<=" | ">" | ">=" | "==" | "!="
//
// with spaces anywhere between the parts. A metric is a built-in one
// (Metrics: latency quantiles, error_rate, rate, dropped, …) or any other
// name, a figure the run supplies, such as lost_samples from a read-back
// check. Each built-in metric has a Kind, which says how its threshold is
// written (a duration with a unit, a fraction or a percentage, a rate, a
// count) and how its figure is shown.
//
// The package parses gates and reports where one goes wrong; it measures
// nothing. internal/plan checks a plan's gates with it, and
// internal/analysis evaluates gates against a run's summaries.
package slo

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Gate is one SLO threshold as users write it in plans and on the command
// line:
//
//	p99 < 200ms
//	p50<=10ms
//	error_rate < 0.1%
//	dropped == 0
//	rate >= 950/s
//	p99{op="GET /"} < 200ms
//	p99{workload="query", op="instant"} < 2s
//	lost_samples == 0
//
// The grammar is metric [labels] comparison threshold, with spaces
// anywhere between them. Labels scope a gate in PromQL's style: op="…"
// to one operation, workload="…" to one workload (its name or its short
// name within its profile); values are double-quoted with \" and \\
// escapes. The comparisons are <, <=, >, >=, == and !=. The threshold's
// form follows the metric's Kind: a duration with a unit ("200ms"),
// a fraction or a percentage ("0.001", "0.1%"), a rate ("950/s", "300/m",
// "950"), or a plain number. Any other metric name is a figure the run
// supplies (e.g. lost_samples from a read-back check), compared with a
// plain number and never scoped.
type Gate struct {
	Expr      string
	Metric    string
	Op        string // "" for every operation of the workload
	Workload  string // "" for every workload
	Cmp       string
	Threshold float64 // in the metric's unit: seconds, a fraction, ops/s or a count
}

// GateError is a gate that does not parse, with the 1-based column (in
// characters) where the problem starts.
type GateError struct {
	Expr   string
	Column int
	Msg    string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("cannot parse SLO gate %q: column %d: %s", e.Expr, e.Column, e.Msg)
}

// ParseGates parses every expression, reporting every one that fails.
func ParseGates(exprs []string) ([]Gate, []error) {
	var gates []Gate
	var errs []error
	for _, e := range exprs {
		g, err := ParseGate(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gates = append(gates, g)
	}
	return gates, errs
}

// gateScanner reads a gate expression rune by rune.
type gateScanner struct {
	expr string
	rs   []rune
	pos  int // index into rs; the column is pos + 1
}

func (s *gateScanner) errorf(pos int, format string, args ...any) *GateError {
	return &GateError{Expr: s.expr, Column: pos + 1, Msg: fmt.Sprintf(format, args...)}
}

func (s *gateScanner) skipSpace() {
	for s.pos < len(s.rs) && unicode.IsSpace(s.rs[s.pos]) {
		s.pos++
	}
}

func (s *gateScanner) peek() rune {
	if s.pos < len(s.rs) {
		return s.rs[s.pos]
	}
	return 0
}

// ident reads [A-Za-z_][A-Za-z0-9_]*.
func (s *gateScanner) ident() string {
	start := s.pos
	for s.pos < len(s.rs) {
		r := s.rs[s.pos]
		if r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || s.pos > start && unicode.IsDigit(r)) {
			s.pos++
			continue
		}
		break
	}
	return string(s.rs[start:s.pos])
}

// ParseGate parses one expression; see Gate for the syntax. A quantile
// in k6's threshold syntax (p(99)<200) is refused with perflab's way of
// writing it.
func ParseGate(expr string) (Gate, error) {
	g, err := parseGate(expr)
	var ge *GateError
	if err != nil && errors.As(err, &ge) {
		if k6 := fromK6(expr); k6 != "" {
			ge.Msg += fmt.Sprintf("; k6's %s is written %q here (quantiles p50…p999, a latency with its unit)", strings.TrimSpace(expr), k6)
		}
	}
	return g, err
}

// k6Threshold is a k6 threshold on a latency quantile, in milliseconds:
// p(99)<200. (k6's avg<100 parses as a gate on a metric named avg.)
var k6Threshold = regexp.MustCompile(`^\s*p\(([0-9]+(?:\.[0-9]+)?)\)\s*(<=|>=|<|>|==|!=)\s*([0-9]+(?:\.[0-9]+)?)\s*$`)

// fromK6 is expr, a k6 threshold, as a perflab gate: "p99 < 200ms"; ""
// when expr is not one.
func fromK6(expr string) string {
	m := k6Threshold.FindStringSubmatch(expr)
	if m == nil {
		return ""
	}
	return fmt.Sprintf("p%s %s %sms", m[1], m[2], m[3])
}

func parseGate(expr string) (Gate, error) {
	s := &gateScanner{expr: expr, rs: []rune(expr)}
	g := Gate{Expr: strings.TrimSpace(expr)}
	s.skipSpace()
	metricAt := s.pos
	if g.Metric = s.ident(); g.Metric == "" {
		return Gate{}, s.errorf(s.pos, "want a metric name, like p99 or error_rate")
	}
	s.decimalQuantile(&g)
	m, builtin := metrics[g.Metric]
	s.skipSpace()
	if s.peek() == '{' {
		if !builtin {
			return Gate{}, s.errorf(metricAt, "unknown metric %q takes no labels: only built-in metrics (%s) are scoped",
				g.Metric, strings.Join(Metrics(), ", "))
		}
		if err := s.labels(&g, m); err != nil {
			return Gate{}, err
		}
		s.skipSpace()
	}
	cmpAt := s.pos
	if g.Cmp = s.comparison(); g.Cmp == "" {
		return Gate{}, s.errorf(cmpAt, "want a comparison (<, <=, >, >=, == or !=) after %s", g.Metric)
	}
	s.skipSpace()
	valueAt := s.pos
	value := strings.TrimSpace(string(s.rs[s.pos:]))
	if value == "" {
		return Gate{}, s.errorf(valueAt, "want a threshold after %s", g.Cmp)
	}
	kind := KindNumber
	if builtin {
		kind = m.kind
	}
	v, msg := parseThreshold(kind, value)
	if msg != "" && !builtin {
		return Gate{}, s.errorf(metricAt, "unknown metric %q: known metrics are %s; any other name is a figure the run supplies, compared with a plain number",
			g.Metric, strings.Join(Metrics(), ", "))
	}
	if msg != "" {
		return Gate{}, s.errorf(valueAt, "%s threshold %q: %s", g.Metric, value, msg)
	}
	g.Threshold = v
	return g, nil
}

// decimalQuantile reads a quantile written as the reports head it, p99.9,
// as the metric it is (p999): the dot is no comparison, and a user who
// copies the column's name must not be told so.
func (s *gateScanner) decimalQuantile(g *Gate) {
	if s.peek() != '.' {
		return
	}
	end := s.pos + 1
	for end < len(s.rs) && unicode.IsDigit(s.rs[end]) {
		end++
	}
	name := g.Metric + string(s.rs[s.pos+1:end])
	if _, ok := metrics[name]; ok && end > s.pos+1 && strings.HasPrefix(name, "p") {
		g.Metric, s.pos = name, end
	}
}

// comparison reads one of the comparison operators.
func (s *gateScanner) comparison() string {
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		rs := []rune(op)
		if s.pos+len(rs) <= len(s.rs) && string(s.rs[s.pos:s.pos+len(rs)]) == op {
			s.pos += len(rs)
			return op
		}
	}
	return ""
}

// labels reads {name="value", …} into g.
func (s *gateScanner) labels(g *Gate, m metric) error {
	s.pos++ // '{'
	seen := map[string]bool{}
	for {
		s.skipSpace()
		if s.peek() == '}' && len(seen) > 0 {
			s.pos++
			return nil
		}
		at := s.pos
		name := s.ident()
		if name != "op" && name != "workload" {
			return s.errorf(at, "want a label op=\"…\" or workload=\"…\"")
		}
		if seen[name] {
			return s.errorf(at, "label %s given twice", name)
		}
		seen[name] = true
		if name == "op" && !m.perOp {
			return s.errorf(at, "%s has no per-operation figure: scope it with workload=\"…\" only", g.Metric)
		}
		s.skipSpace()
		if s.peek() != '=' {
			return s.errorf(s.pos, "want = after %s", name)
		}
		s.pos++
		s.skipSpace()
		v, err := s.quoted()
		if err != nil {
			return err
		}
		if name == "op" {
			g.Op = v
		} else {
			g.Workload = v
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
		default:
			return s.errorf(s.pos, "want , or } after the value of %s", name)
		}
	}
}

// quoted reads a double-quoted string with \" and \\ escapes.
func (s *gateScanner) quoted() (string, error) {
	if s.peek() != '"' {
		return "", s.errorf(s.pos, "want a double-quoted value")
	}
	open := s.pos
	s.pos++
	var b strings.Builder
	for s.pos < len(s.rs) {
		r := s.rs[s.pos]
		s.pos++
		switch {
		case r == '"':
			return b.String(), nil
		case r == '\\' && s.pos < len(s.rs) && (s.rs[s.pos] == '"' || s.rs[s.pos] == '\\'):
			b.WriteRune(s.rs[s.pos])
			s.pos++
		default:
			b.WriteRune(r)
		}
	}
	return "", s.errorf(open, "the quote opened here is not closed")
}
