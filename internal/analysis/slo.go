package analysis

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
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
// form follows the metric (GateMetrics): a duration with a unit ("200ms"),
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

// gateKind is how a metric's threshold is written and its figure shown.
type gateKind uint8

const (
	kindDuration gateKind = iota // seconds
	kindFraction                 // 0…1, written as a fraction or a percentage
	kindRate                     // per second
	kindCount
	kindNumber // a figure the run supplies
)

// gateMetric is one built-in metric.
type gateMetric struct {
	kind    gateKind
	perOp   bool // has a figure per operation
	doc     string
	measure func(gateScope) gateFigure
}

// gateMetrics is the registry of built-in metrics.
var gateMetrics = map[string]gateMetric{
	"p50":                {kindDuration, true, "latency p50 of successful requests, from the intended start", latencyQuantile(0.50)},
	"p90":                {kindDuration, true, "latency p90 of successful requests", latencyQuantile(0.90)},
	"p99":                {kindDuration, true, "latency p99 of successful requests", latencyQuantile(0.99)},
	"p999":               {kindDuration, true, "latency p99.9 of successful requests", latencyQuantile(0.999)},
	"max":                {kindDuration, true, "the largest latency of a successful request", gateLatencyMax},
	"mean":               {kindDuration, true, "the mean latency of successful requests", gateLatencyMean},
	"ttfb_p50":           {kindDuration, true, "time to first byte p50 of successful requests", ttfbQuantile(0.50)},
	"ttfb_p99":           {kindDuration, true, "time to first byte p99 of successful requests", ttfbQuantile(0.99)},
	"ttft_p50":           {kindDuration, true, "time to first token p50 (streams)", measureQuantile(stats.TTFT, 0.50)},
	"ttft_p99":           {kindDuration, true, "time to first token p99 (streams)", measureQuantile(stats.TTFT, 0.99)},
	"itl_p50":            {kindDuration, true, "inter-token latency p50, over every gap", measureQuantile(stats.ITL, 0.50)},
	"itl_p99":            {kindDuration, true, "inter-token latency p99, over every gap", measureQuantile(stats.ITL, 0.99)},
	"tpot_p50":           {kindDuration, true, "time per output token p50, one per stream", measureQuantile(stats.TPOT, 0.50)},
	"tpot_p99":           {kindDuration, true, "time per output token p99, one per stream", measureQuantile(stats.TPOT, 0.99)},
	"output_tokens_rate": {kindRate, true, "output tokens per second", gateOutputTokensRate},
	"error_rate":         {kindFraction, true, "failed / all requests", gateErrorRate},
	"success_rate":       {kindFraction, true, "successful / all requests", gateSuccessRate},
	"rate":               {kindRate, true, "completed operations per second", gateRate},
	"requests":           {kindCount, true, "requests in the window", gateRequests},
	"errors":             {kindCount, true, "failed requests in the window", gateErrors},
	"dropped":            {kindCount, false, "arrivals dropped in the window (every VU busy)", gateDropped},
}

// GateMetrics lists the built-in metrics, alphabetically.
func GateMetrics() []string {
	names := make([]string, 0, len(gateMetrics))
	for n := range gateMetrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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

// ParseGate parses one expression; see Gate for the syntax.
func ParseGate(expr string) (Gate, error) {
	s := &gateScanner{expr: expr, rs: []rune(expr)}
	g := Gate{Expr: strings.TrimSpace(expr)}
	s.skipSpace()
	metricAt := s.pos
	if g.Metric = s.ident(); g.Metric == "" {
		return Gate{}, s.errorf(s.pos, "want a metric name, like p99 or error_rate")
	}
	s.decimalQuantile(&g)
	m, builtin := gateMetrics[g.Metric]
	s.skipSpace()
	if s.peek() == '{' {
		if !builtin {
			return Gate{}, s.errorf(metricAt, "unknown metric %q takes no labels: only built-in metrics (%s) are scoped",
				g.Metric, strings.Join(GateMetrics(), ", "))
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
	kind := kindNumber
	if builtin {
		kind = m.kind
	}
	v, msg := parseThreshold(kind, value)
	if msg != "" && !builtin {
		return Gate{}, s.errorf(metricAt, "unknown metric %q: known metrics are %s; any other name is a figure the run supplies, compared with a plain number",
			g.Metric, strings.Join(GateMetrics(), ", "))
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
	if _, ok := gateMetrics[name]; ok && end > s.pos+1 && strings.HasPrefix(name, "p") {
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
func (s *gateScanner) labels(g *Gate, m gateMetric) error {
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

// parseThreshold reads a threshold of the given kind; msg says what is
// wrong with it.
func parseThreshold(kind gateKind, v string) (float64, string) {
	switch kind {
	case kindDuration:
		if _, err := strconv.ParseFloat(v, 64); err == nil && v != "0" {
			return 0, "want a duration with a unit, like 200ms or 1.5s"
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, "want a duration with a unit, like 200ms or 1.5s"
		}
		return d.Seconds(), ""
	case kindFraction:
		num, pct := strings.CutSuffix(v, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if pct {
			f /= 100
			// the double nearest the percentage written, as a measured
			// 7/1000 is 0.007's: f / 100 makes 0.7% 0.006999…
			if r, ok := new(big.Rat).SetString(strings.TrimSpace(num)); ok {
				f, _ = r.Quo(r, big.NewRat(100, 1)).Float64()
			}
		}
		if err != nil || !(f >= 0 && f <= 1) {
			return 0, "want a fraction from 0 to 1 or a percentage, like 0.001 or 0.1%"
		}
		return f, ""
	case kindRate:
		r, err := units.ParseRate(v)
		if err != nil {
			return 0, "want a rate, like 950/s, 300/m or 950"
		}
		return r, ""
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || kind == kindCount && f < 0 {
		return 0, "want a plain number, like 0 or 1000"
	}
	return f, ""
}
