package slo

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func closeTo(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestParseGate(t *testing.T) {
	tests := []struct {
		expr string
		want Gate
	}{
		{"p99 < 200ms", Gate{Metric: "p99", Cmp: "<", Threshold: 0.2}},
		{"p50<=10ms", Gate{Metric: "p50", Cmp: "<=", Threshold: 0.01}},
		{"  error_rate < 0.1% ", Gate{Metric: "error_rate", Cmp: "<", Threshold: 0.001}},
		{"success_rate >= 0.999", Gate{Metric: "success_rate", Cmp: ">=", Threshold: 0.999}},
		{"dropped == 0", Gate{Metric: "dropped", Cmp: "==", Threshold: 0}},
		{"lost_samples == 0", Gate{Metric: "lost_samples", Cmp: "==", Threshold: 0}},
		{"rate >= 950/s", Gate{Metric: "rate", Cmp: ">=", Threshold: 950}},
		{"rate > 600/m", Gate{Metric: "rate", Cmp: ">", Threshold: 10}},
		{"max != 1.5s", Gate{Metric: "max", Cmp: "!=", Threshold: 1.5}},
		{`p99{op="GET /"} < 200ms`, Gate{Metric: "p99", Op: "GET /", Cmp: "<", Threshold: 0.2}},
		{`p999 { workload = "query" , op="say \"hi\" \\" } > 1µs`, Gate{Metric: "p999", Workload: "query", Op: `say "hi" \`, Cmp: ">", Threshold: 1e-6}},
		{`dropped{workload="w"} == 0`, Gate{Metric: "dropped", Workload: "w", Cmp: "==", Threshold: 0}},
		// p99.9 as the reports head the column is p999
		{"p99.9 < 1s", Gate{Metric: "p999", Cmp: "<", Threshold: 1}},
		{`p99.9{op="GET /"}<=5ms`, Gate{Metric: "p999", Op: "GET /", Cmp: "<=", Threshold: 0.005}},
	}
	for _, tt := range tests {
		got, err := ParseGate(tt.expr)
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		tt.want.Expr = strings.TrimSpace(tt.expr)
		if got.Expr != tt.want.Expr || got.Metric != tt.want.Metric || got.Op != tt.want.Op || got.Workload != tt.want.Workload ||
			got.Cmp != tt.want.Cmp || !closeTo(got.Threshold, tt.want.Threshold, 1e-12) {
			t.Errorf("%q: %+v, want %+v", tt.expr, got, tt.want)
		}
	}
}

func TestParseGateErrors(t *testing.T) {
	tests := []struct {
		expr string
		col  int
		msg  string
	}{
		{"", 1, "want a metric name, like p99 or error_rate"},
		{"< 1s", 1, "want a metric name"},
		{"p99 200ms", 5, "want a comparison (<, <=, >, >=, == or !=) after p99"},
		{"p99 = 1s", 5, "want a comparison"},
		{"p99.5 < 1s", 4, "want a comparison (<, <=, >, >=, == or !=) after p99"},
		{"p99 < ", 7, "want a threshold after <"},
		{"p99 < 200", 7, `p99 threshold "200": want a duration with a unit, like 200ms or 1.5s`},
		{"p99 < -5ms", 7, "want a duration with a unit"},
		{"error_rate < 5x", 14, `error_rate threshold "5x": want a fraction from 0 to 1 or a percentage`},
		{"error_rate < 150%", 14, "want a fraction from 0 to 1"},
		{"rate >= fast", 9, `rate threshold "fast": want a rate, like 950/s`},
		{"dropped == -1", 12, "want a plain number"},
		{"p99x < 200ms", 1, `unknown metric "p99x": known metrics are dropped, error_rate, errors, goodput, goodput_rate, itl_p50, itl_p99, max, mean, ntpot_p50, ntpot_p99, output_tokens_rate, p50, p90, p99, p999, rate, requests, success_rate, tpot_p50, tpot_p99, ttfb_p50, ttfb_p99, ttft_p50, ttft_p99, ttst_p50, ttst_p99; any other name is a figure the run supplies`},
		{`lost{op="a"} == 0`, 1, `unknown metric "lost" takes no labels`},
		{`p99{path="/"} < 1s`, 5, `want a label op="…" or workload="…"`},
		{`p99{} < 1s`, 5, "want a label"},
		{`p99{op="/"  < 1s`, 13, "want , or } after the value of op"},
		{`p99{op="/} < 1s`, 8, "the quote opened here is not closed"},
		{`p99{op=/} < 1s`, 8, "want a double-quoted value"},
		{`p99{op "/"} < 1s`, 8, "want = after op"},
		{`p99{op="a", op="b"} < 1s`, 13, "label op given twice"},
		{`dropped{op="x"} == 0`, 9, `dropped has no per-operation figure: scope it with workload="…" only`},
		{`p50{op="é"} < 1ms x`, 15, `p50 threshold "1ms x"`}, // columns count characters, not bytes
	}
	for _, tt := range tests {
		_, err := ParseGate(tt.expr)
		var ge *GateError
		if !errors.As(err, &ge) {
			t.Errorf("%q: error %v, want a GateError", tt.expr, err)
			continue
		}
		if ge.Column != tt.col || !strings.Contains(ge.Msg, tt.msg) {
			t.Errorf("%q: column %d %q, want column %d %q", tt.expr, ge.Column, ge.Msg, tt.col, tt.msg)
		}
		if !strings.HasPrefix(err.Error(), "cannot parse SLO gate ") {
			t.Errorf("%q: %v", tt.expr, err)
		}
	}
	_, errs := ParseGates([]string{"p99 < 1s", "p99 <", "bad"})
	if len(errs) != 2 {
		t.Errorf("ParseGates: %v, want both bad gates", errs)
	}
}

// TestK6ThresholdsGetAHint: k6's threshold syntax is refused with the
// gate perflab means by it; a mistake that is not k6's gets no such hint.
func TestK6ThresholdsGetAHint(t *testing.T) {
	for expr, want := range map[string]string{
		"p(99)<200":    `k6's p(99)<200 is written "p99 < 200ms" here`,
		"p(99.9) < 50": `k6's p(99.9) < 50 is written "p99.9 < 50ms" here`,
	} {
		_, err := ParseGate(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", expr, err, want)
		}
	}
	if _, err := ParseGate("p99 <"); err == nil || strings.Contains(err.Error(), "k6") {
		t.Errorf("not k6's: %v", err)
	}
}
