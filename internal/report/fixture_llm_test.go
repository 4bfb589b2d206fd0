package report

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// llmRun is a run without a plan of one openai workload streaming chat
// completions from a mock provider set to a 50 ms time to first token and
// 100 tokens/s, for 11 one-second intervals (the window leaves out the
// first: 10 s). Each interval holds 20 streams and one 429:
//
//	latency 1.04 s each (50 ms + 99 gaps of 10 ms); TTFT 50 ms
//	gaps: 99 per stream, 10 ms, but in the first stream of each interval 9
//	  of them 30 ms: 1980 gaps, 1971 at 10 ms and 9 at 30 ms: p50 and p99 10 ms,
//	  p99.9 and max 30 ms, mean (1971 × 10 + 9 × 30) / 1980 = 10.09 ms
//	TPOT (1.04 s − 50 ms) / 99 = 10 ms; the first stream's (990 + 180 ms) / 99 = 11.8 ms;
//	  p50 and p90 10 ms: 100 tokens/s per stream
//	tokens: 12 prompt and 100 output per stream: 240 and 2000 per second
func llmRun() *view.Run {
	start := t0
	var ivs []*stats.Interval
	for i := range 11 {
		st := stats.NewOpStats()
		st.Measures[stats.TTFT], st.Measures[stats.ITL], st.Measures[stats.TPOT] = stats.NewHist(), stats.NewHist(), stats.NewHist()
		for k := range 20 {
			st.Latency.Record(1040 * time.Millisecond)
			st.Service.Record(1040 * time.Millisecond)
			st.TTFB.Record(2 * time.Millisecond)
			st.Measures[stats.TTFT].Record(50 * time.Millisecond)
			decode := time.Duration(0)
			for g := range 99 {
				gap := 10 * time.Millisecond
				if k == 0 && g < 9 {
					gap = 30 * time.Millisecond
				}
				st.Measures[stats.ITL].Record(gap)
				decode += gap
			}
			st.Measures[stats.TPOT].Record(decode / 99)
		}
		st.Latency.Record(time.Millisecond)
		st.Service.Record(time.Millisecond)
		st.Classes[stats.OK], st.Classes[stats.RateLimited] = 20, 1
		st.Samples[stats.RateLimited] = "HTTP 429 Too Many Requests: rate limit reached"
		st.Counters[stats.PromptTokens], st.Counters[stats.OutputTokens] = 20*12, 20*100
		st.BytesSent, st.BytesRecv = 21*150, 20*14000
		ivs = append(ivs, &stats.Interval{Index: i, Start: start.Add(sec(float64(i))), End: start.Add(sec(float64(i + 1))),
			Ops: map[string]*stats.OpStats{"chat": st}, Lag: stats.NewHist(), VUs: 22})
	}
	w := analysis.Workload{Name: "chat", Driver: "openai", Model: "open", Target: "chat http://127.0.0.1:8000 model perflab-mock",
		TargetRate: 21, VUsMin: 2, VUsMax: 100, MaxVUs: 23, Start: start, LoadEnd: start.Add(11 * time.Second),
		End: start.Add(11 * time.Second), Scheduled: 231,
		Window: analysis.Window{Start: start.Add(time.Second), End: start.Add(11 * time.Second), Rule: "test: after the first interval"}}
	sum := analysis.Summarize(w, ivs)
	phase := &view.Phase{Implicit: true, Window: sum.Window, Workloads: []*analysis.Summary{sum},
		Drivers: map[string]*view.DriverNotes{"chat": {Facts: []driver.Fact{{Name: "api", Value: "chat http://127.0.0.1:8000 model perflab-mock"},
			{Name: "prompts", Value: "2"}, {Name: "successful requests", Value: "220"}, {Name: "answers with usage", Value: "220"},
			{Name: "prompt tokens", Value: "2640"}, {Name: "output tokens", Value: "22000"}}}}}
	return &view.Run{Name: "llm", Dir: "/runs/llm-20261121-172400", Command: "perflab run llm.yaml", Tool: "perflab 0.1.0",
		Host: "bench-1", Started: t0, Ended: t0.Add(12 * time.Second), State: "completed",
		Workloads: []*analysis.Summary{sum}, Cells: []*view.Cell{{Implicit: true, Phases: []*view.Phase{phase}}}}
}

// The cross-profile Throughput achieved table gains a TTFT p50 column when
// a workload streamed tokens ("–" for the others), and only then.
func TestThroughputAchievedShowsTTFT(t *testing.T) {
	llm := llmRun().Workloads[0]
	http := workload("push", "", "", 0, t0, 3)
	render := func(phases ...*view.Phase) string {
		d := &doc{}
		throughputAchieved(d, phases, 4)
		var b strings.Builder
		d.markdown(&b)
		return b.String()
	}
	got := render(&view.Phase{Profile: "small", Workloads: []*analysis.Summary{http}}, &view.Phase{Profile: "large", Workloads: []*analysis.Summary{llm}})
	for _, want := range []string{
		"| Profile | Workload | Rate | Target | Success | Received/s | Sent/s | p50 | p99 | TTFB p50 | TTFT p50 | Requests in window |",
		"| small | push | 100.0/s | 100/s | 100 % | 100 KiB/s | 0 B/s | 10.0 ms | 10.0 ms | – | – | 200 |",
		"| large | chat | 21.0/s | 21/s | 95.24 % | 273 KiB/s | 3.08 KiB/s | 1.04 s | 1.04 s | 2.00 ms | 50.0 ms | 210 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if got := render(&view.Phase{Profile: "small", Workloads: []*analysis.Summary{http}}); strings.Contains(got, "TTFT") {
		t.Errorf("a TTFT column without a stream:\n%s", got)
	}
}
