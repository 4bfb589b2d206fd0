package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// overheads is a gateway measured at 2 ms and one whose overhead the data
// cannot tell from 0.
func overheads() []*analysis.Overhead {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	side := func(op string, mean time.Duration) analysis.OverheadSide {
		return analysis.OverheadSide{Op: op, Requests: 3000, OK: 3000, SuccessRate: 1, RequestBytes: 133, ResponseBytes: 1403,
			Latency: analysis.Quantiles{Count: 3000, P50: mean, P90: mean + time.Millisecond, P99: mean + 3*time.Millisecond, Mean: mean}}
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	return []*analysis.Overhead{{
		Workload: analysis.Workload{Name: "p/chat", Short: "chat", Profile: "p"},
		Window:   analysis.Window{Start: t0, End: t0.Add(29 * time.Second)},
		Direct:   side("direct: chat", ms(5.1)), Gateway: side("gateway: chat", ms(7.2)),
		Added: []analysis.Added{
			{Quantile: 0.5, Direct: ms(5.1), Gateway: ms(7.2), Value: ms(2.1), Low: ms(2.05), High: ms(2.16), HasInterval: true, Significance: analysis.Significant, Resolution: 4 * time.Microsecond},
			{Quantile: 0.9, Direct: ms(6.1), Gateway: ms(8.2), Value: ms(2.1), Low: ms(1.9), High: ms(2.3), HasInterval: true, Significance: analysis.Significant, Resolution: 4 * time.Microsecond},
			{Quantile: 0.99, Direct: ms(8.1), Gateway: ms(8.0), Value: -ms(0.1), Low: -ms(0.6), High: ms(0.4), HasInterval: true, Resolution: 4 * time.Microsecond},
		},
		Component: "gw", HasResources: true, CPU: analysis.Stat{N: 29, P99: 0.21, Max: 0.25, Avg: 0.18}, CPUMetric: "cpu_cores",
		Memory: analysis.Stat{N: 29, P99: 30 << 20, Max: 31 << 20, Avg: 29 << 20}, MemoryMetric: "rss_bytes",
		Intervals: 29, Batches: 5, Method: "paired bootstrap (test)",
	}, {
		Workload: analysis.Workload{Name: "p/get", Short: "get", Profile: "p"},
		Window:   analysis.Window{Start: t0, End: t0.Add(9 * time.Second)},
		Direct:   side("direct: GET /", ms(1)), Gateway: side("gateway: GET /", ms(1.05)),
		Added:     []analysis.Added{{Quantile: 0.5, Direct: ms(1), Gateway: ms(1.05), Value: ms(0.05), Resolution: time.Microsecond}},
		Intervals: 9, Batches: 3, Method: "paired bootstrap (test)",
		Warnings: []string{"9 intervals in the window (3 batches): the added latency is given without an interval"},
	}}
}

func TestOverheadGolden(t *testing.T) {
	var b strings.Builder
	markdownOverheads(&b, overheads())
	golden(t, "overhead.md", []byte(b.String()))
	js, err := json.MarshalIndent(toJSONOverheads(overheads()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overhead.json", append(js, '\n'))
}

// The section sits near the top of the report and in summary.json; a run
// without a gateway has neither.
func TestOverheadInReports(t *testing.T) {
	r := singleRun()
	var md, js bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Gateway overhead") || strings.Contains(js.String(), "gateway_overhead") {
		t.Error("a run without a gateway has a gateway section")
	}
	r.Overheads = overheads()
	md.Reset()
	js.Reset()
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(md.String(), "## Gateway overhead"), strings.Index(md.String(), "Workload `"); i < 0 || i > j {
		t.Errorf("the gateway section is not before the workloads:\n%s", md.String())
	}
	var s struct {
		Gateway []struct {
			Added []struct {
				Value float64  `json:"value"`
				Low   *float64 `json:"low"`
			} `json:"added_latency_ms"`
		} `json:"gateway_overhead"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil || len(s.Gateway) != 2 || s.Gateway[0].Added[0].Value != 2.1 || s.Gateway[1].Added[0].Low != nil {
		t.Errorf("summary.json gateway_overhead: %+v, %v", s, err)
	}
}

func TestSignedDur(t *testing.T) {
	for d, want := range map[time.Duration]string{2100 * time.Microsecond: "+2.10 ms", -40 * time.Microsecond: "−40 µs", 0: "0"} {
		if got := signedDur(d); got != want {
			t.Errorf("signedDur(%v) = %q, want %q", d, got, want)
		}
	}
	for q, want := range map[float64]string{0.5: "50", 0.99: "99", 0.999: "99.9"} {
		if got := quantileLabel(q); got != want {
			t.Errorf("quantileLabel(%v) = %q, want %q", q, got, want)
		}
	}
}

// The terminal gives the headline too: a user of the Bifrost method reads
// the overhead where the run ends, not only in report.md.
func TestOverheadOnTheTerminal(t *testing.T) {
	r := singleRun()
	r.Overheads = overheads()
	var term bytes.Buffer
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"p/chat through gw: gateway overhead p50 +2.10 ms (95 % CI +2.05 ms to +2.16 ms), p90 +2.10 ms",
		"p/get: gateway overhead p50 ~ (+50 µs, no interval)",
	} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("the terminal lacks %q:\n%s", want, term.String())
		}
	}
}

// failedGateway is a gateway every request through which failed: the
// direct side's p50 is 449.5 ms, the gateway side has no latency.
func failedGateway() *analysis.Overhead {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lat := 449535 * time.Microsecond
	ov := &analysis.Overhead{Workload: analysis.Workload{Name: "p/stream", Short: "stream", Profile: "p"},
		Window:    analysis.Window{Start: t0, End: t0.Add(29 * time.Second)},
		Direct:    analysis.OverheadSide{Op: "direct: chat", Requests: 300, OK: 300, SuccessRate: 1, Latency: analysis.Quantiles{Count: 300, P50: lat, Mean: lat}},
		Gateway:   analysis.OverheadSide{Op: "gateway: chat", Requests: 300},
		Intervals: 29, Batches: 5, Method: "paired bootstrap (test)",
		Warnings: []string{"none of the 300 requests through the gateway in the window succeeded (300 × status_5xx: HTTP 500)"}}
	for _, q := range analysis.OverheadQuantiles {
		ov.Added = append(ov.Added, analysis.Added{Quantile: q, Direct: lat, NoGateway: true, Resolution: 256 * time.Microsecond})
	}
	return ov
}

// A side without successes has no overhead figure anywhere (before: −449.5
// ms on the terminal and in summary.json, beside a gateway p50 of 0).
func TestOverheadWithoutSuccesses(t *testing.T) {
	r := singleRun()
	r.Overheads = []*analysis.Overhead{failedGateway()}
	var term, md, js bytes.Buffer
	for _, f := range []func() error{func() error { return Terminal(&term, r) }, func() error { return Markdown(&md, r) }, func() error { return JSON(&js, r) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if want := "p/stream: gateway overhead no figure (no request through the gateway succeeded)\n"; !strings.Contains(term.String(), want) {
		t.Errorf("terminal: want %q in\n%s", want, term.String())
	}
	for _, want := range []string{"| p50 latency | 449.5 ms | – | no figure (no request through the gateway succeeded) |",
		"**Gateway overhead at p50: no figure (no request through the gateway succeeded)**", "none of the 300 requests through the gateway"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md: want %q in\n%s", want, md.String())
		}
	}
	for _, out := range []string{term.String(), md.String(), js.String()} {
		if strings.Contains(out, "−4") || strings.Contains(out, "-449") || strings.Contains(out, `"gateway": 0,`) {
			t.Errorf("a figure from no successes:\n%s", out)
		}
	}
	var s struct {
		Gateway []struct {
			Added []struct {
				Direct, Gateway, Value *float64
			} `json:"added_latency_ms"`
			Warnings []string `json:"warnings"`
			Direct   struct {
				Latency *struct{ Count int64 } `json:"latency_ms"`
			} `json:"direct"`
			Through struct {
				Latency *struct{ Count int64 } `json:"latency_ms"`
			} `json:"gateway"`
		} `json:"gateway_overhead"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil || len(s.Gateway) != 1 || len(s.Gateway[0].Added) != 3 {
		t.Fatalf("summary.json: %+v, %v", s, err)
	}
	if g := s.Gateway[0]; g.Through.Latency != nil || g.Direct.Latency == nil || g.Direct.Latency.Count == 0 {
		t.Errorf("sides' latency_ms: direct %+v, gateway %+v; want the direct side's, the gateway's null", g.Direct.Latency, g.Through.Latency)
	}
	for line := range strings.Lines(md.String()) {
		if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| Average latency |") && (len(cells) < 3 || cells[1] == "–" || cells[2] != "–") {
			t.Errorf("report.md: %q, want the gateway's average latency –", line)
		}
	}
	for _, a := range s.Gateway[0].Added {
		if a.Value != nil || a.Gateway != nil || a.Direct == nil || *a.Direct != 449.535 {
			t.Errorf("added_latency_ms: direct %v, gateway %v, value %v; want 449.535, null, null", a.Direct, a.Gateway, a.Value)
		}
	}
}
