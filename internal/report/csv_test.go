package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// TestCSV: one row per operation per interval, in time order across
// workloads and operations, each figure in its column's unit, empty
// percentiles where an interval had no successful request or too few for
// the percentile (a p90 needs 10, a p99 100), and the short last interval
// kept but marked partial.
func TestCSV(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ms, s := time.Millisecond, time.Second
	r := &view.Run{OpTimelines: map[string]map[string][]analysis.IntervalFigures{
		"p/get": {
			"GET /b": {{Start: t0, End: t0.Add(s), Requests: 10, Errors: 10, Rate: 10}},
			"GET /a": {{Start: t0, End: t0.Add(s), Requests: 101, Errors: 1, Rate: 101, Latencies: 100, P50: 2 * ms, P90: 3 * ms, P99: 4500 * time.Microsecond},
				{Start: t0.Add(s), End: t0.Add(2 * s), Requests: 99, Rate: 99, Latencies: 99, P50: ms, P90: ms, P99: ms},
				{Start: t0.Add(2 * s), End: t0.Add(2*s + 250*ms), Requests: 5, Rate: 20, Latencies: 5, P50: ms, P90: ms, P99: ms}},
		},
		"a/put": {"PUT": {{Start: t0.Add(s), End: t0.Add(2 * s), Requests: 7, Rate: 7, Latencies: 7, P50: 9 * ms, P90: 9 * ms, P99: 9 * ms}}},
	}}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"start", "end", "interval_s", "partial", "workload", "operation", "requests", "errors", "rate_per_s", "latency_count",
			"latency_p50_ms", "latency_p90_ms", "latency_p99_ms"},
		{"2026-11-27T12:00:00.000Z", "2026-11-27T12:00:01.000Z", "1.000", "false", "p/get", "GET /a", "101", "1", "101.000", "100", "2.000", "3.000", "4.500"},
		{"2026-11-27T12:00:00.000Z", "2026-11-27T12:00:01.000Z", "1.000", "false", "p/get", "GET /b", "10", "10", "10.000", "0", "", "", ""},
		{"2026-11-27T12:00:01.000Z", "2026-11-27T12:00:02.000Z", "1.000", "false", "a/put", "PUT", "7", "0", "7.000", "7", "9.000", "", ""},
		{"2026-11-27T12:00:01.000Z", "2026-11-27T12:00:02.000Z", "1.000", "false", "p/get", "GET /a", "99", "0", "99.000", "99", "1.000", "1.000", ""},
		{"2026-11-27T12:00:02.000Z", "2026-11-27T12:00:02.250Z", "0.250", "true", "p/get", "GET /a", "5", "0", "20.000", "5", "1.000", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	for i := range want {
		if strings.Join(rows[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("row %d: %q, want %q", i, rows[i], want[i])
		}
	}
}

// An LLM run's CSV has the stream timings and tokens of each interval,
// empty where an operation had no stream (a non-streamed call) or too few
// for a p99 (10 first tokens; 490 gaps make one), and the tokens per
// second of the interval.
func TestCSVOfAnLLMRun(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	r := &view.Run{OpTimelines: map[string]map[string][]analysis.IntervalFigures{
		"p/chat": {"POST /v1/chat/completions": {
			{Start: t0, End: t0.Add(2 * time.Second), Requests: 10, Rate: 5, Latencies: 10, P50: 500 * ms, P90: 600 * ms, P99: 700 * ms,
				LLM: analysis.LLMFigures{TTFT: [2]time.Duration{100 * ms, 150 * ms}, TTFTs: 10, ITL: [2]time.Duration{10 * ms, 20 * ms}, ITLs: 490,
					TPOT: [2]time.Duration{10 * ms, 11 * ms}, TPOTs: 10, PromptTokens: 2000, OutputTokens: 500}},
			{Start: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second), Requests: 1, Rate: 1, Latencies: 1, P50: ms, P90: ms, P99: ms,
				LLM: analysis.LLMFigures{PromptTokens: 200, OutputTokens: 50}}, // not streamed: tokens, no timings
		}},
	}}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v: %q", err, rows)
	}
	head := strings.Join(rows[0][13:], ",")
	if head != "ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,tpot_p50_ms,tpot_p99_ms,prompt_tokens,output_tokens,output_tokens_per_s" {
		t.Errorf("LLM columns %q", head)
	}
	if got := strings.Join(rows[1][13:], ","); got != "100.000,,10.000,20.000,10.000,,2000,500,250.000" {
		t.Errorf("streamed interval %q", got)
	}
	if got := strings.Join(rows[2][13:], ","); got != ",,,,,,200,50,50.000" {
		t.Errorf("interval without streams %q", got)
	}
}
