package export

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// llmInterval is interval i of one operation "chat": ok streams whose
// first token came after ttft, then tokens more every itl, each asked
// 100 prompt tokens, good of them within the goodput bounds (of ok+errs
// judged) and errs answered 429.
func llmInterval(i, ok, errs, good, tokens int, ttft, itl time.Duration) *stats.Interval {
	iv := interval(i, 0, 0, 0)
	op := iv.Ops["get"]
	delete(iv.Ops, "get")
	iv.Ops["chat"] = op
	for range ok {
		op.Latency.Record(ttft + time.Duration(tokens-1)*itl)
		rec := func(m stats.Measure, d time.Duration) {
			if op.Measures[m] == nil {
				op.Measures[m] = stats.NewHist()
			}
			op.Measures[m].Record(d)
		}
		rec(stats.TTFT, ttft)
		rec(stats.TPOT, itl)
		for range tokens - 1 {
			rec(stats.ITL, itl)
		}
	}
	op.Classes[stats.OK], op.Classes[stats.RateLimited] = int64(ok), int64(errs)
	op.Counters[stats.PromptTokens] = int64(100 * ok)
	op.Counters[stats.OutputTokens] = int64(tokens * ok)
	op.Counters[stats.GoodputJudged], op.Counters[stats.Goodput] = int64(ok+errs), int64(good)
	return iv
}

// TestRemoteWriteLLMSeries: an openai workload's intervals give the time
// to first token, inter-token latency and time per output token as
// summaries, the tokens and goodput as counters from their first value,
// and the interval's output tokens/s and goodput ratio as gauges; an
// HTTP workload's give none of them.
func TestRemoteWriteLLMSeries(t *testing.T) {
	rcv, url := newRWReceiver(t)
	set, err := Start([]Target{{Kind: RemoteWrite, URL: url, Interval: 50 * time.Millisecond}}, Options{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Cell: "c", Profile: "p", Name: "llm"}
	set.Interval(w, llmInterval(0, 8, 2, 0, 20, 50*time.Millisecond, 10*time.Millisecond))
	set.Interval(w, llmInterval(1, 10, 0, 5, 30, 80*time.Millisecond, 20*time.Millisecond))
	set.Interval(Workload{Cell: "c", Profile: "p", Name: "http"}, interval(0, 5, 0, time.Millisecond))
	if rep := set.Close(5 * time.Second); !rep[0].OK() {
		t.Fatalf("report %+v", rep)
	}
	base := "cell=c,operation=chat,profile=p,run=r,workload=llm"
	quantile := func(q string) string {
		return "__name__=perflab_ttft_seconds," + strings.Replace(base, "profile=p,", "profile=p,quantile="+q+",", 1)
	}
	// Counters start with a zero at the first interval's start (second 0);
	// quantiles and gauges carry the intervals' ends alone (from second 1).
	for _, c := range []struct {
		key   string
		first int
		want  []float64
	}{
		// of 8 and 10 first tokens: a maximum each, a p90 of the 10, no p99
		{quantile("1"), 1, []float64{0.050, 0.080}},
		{quantile("0.9"), 2, []float64{0.080}},
		{quantile("0.99"), 1, nil},
		{"__name__=perflab_ttft_seconds_count," + base, 0, []float64{0, 8, 18}},
		{"__name__=perflab_ttft_seconds_sum," + base, 0, []float64{0, 8 * 0.050, 8*0.050 + 10*0.080}},
		{"__name__=perflab_itl_seconds_count," + base, 0, []float64{0, 8 * 19, 8*19 + 10*29}},
		{"__name__=perflab_tpot_seconds_sum," + base, 0, []float64{0, 8 * 0.010, 8*0.010 + 10*0.020}},
		{"__name__=perflab_prompt_tokens_total," + base, 0, []float64{0, 800, 1800}},
		{"__name__=perflab_output_tokens_total," + base, 0, []float64{0, 160, 460}},
		{"__name__=perflab_output_tokens_per_second," + base, 1, []float64{160, 300}},
		{"__name__=perflab_goodput_judged_total," + base, 0, []float64{0, 10, 20}},
		{"__name__=perflab_goodput_total," + base, 0, []float64{0, 0, 5}},
		{"__name__=perflab_goodput_ratio," + base, 1, []float64{0, 0.5}},
	} {
		got := rcv.get(c.key)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.key, got, c.want)
			continue
		}
		for i := range got {
			at := t0.Add(time.Duration(c.first+i) * time.Second).UnixMilli()
			if got[i].Timestamp != at || !near(got[i].Value, c.want[i], 0.002) {
				t.Errorf("%s: %v, want %v from second %d", c.key, got, c.want, c.first)
				break
			}
		}
	}
	for k := range rcv.series {
		if strings.Contains(k, "workload=http") && (strings.Contains(k, "token") || strings.Contains(k, "goodput") ||
			strings.Contains(k, "ttft") || strings.Contains(k, "itl") || strings.Contains(k, "tpot") || strings.Contains(k, "ttst")) {
			t.Errorf("an HTTP workload has %s", k)
		}
	}
}

// TestOTLPLLMSeries: over OTLP the measures are summaries and the tokens
// cumulative monotonic sums.
func TestOTLPLLMSeries(t *testing.T) {
	rcv := testutil.StartOTLPMetrics(t)
	set, err := Start([]Target{{Kind: OTLP, URL: strings.TrimSuffix(rcv.HTTPURL, "/v1/metrics")}}, Options{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Profile: "p", Name: "llm"}
	set.Interval(w, llmInterval(0, 8, 2, 4, 20, 50*time.Millisecond, 10*time.Millisecond))
	set.Interval(w, llmInterval(1, 10, 0, 10, 30, 80*time.Millisecond, 20*time.Millisecond))
	if rep := set.Close(5 * time.Second); !rep[0].OK() {
		t.Fatalf("%+v", rep)
	}
	var ttft, itlCount, output, ratio []float64
	for _, p := range rcv.Points() {
		switch {
		case p.Name == "perflab_ttft_seconds" && p.Kind == "summary" && len(p.Quantiles) > 0:
			ttft = append(ttft, p.Quantiles[0.5])
		case p.Name == "perflab_itl_seconds" && p.Kind == "summary":
			itlCount = append(itlCount, float64(p.Count))
		case p.Name == "perflab_output_tokens_total" && p.Kind == "sum" && p.Monotonic && p.Cumulative:
			output = append(output, p.Value)
		case p.Name == "perflab_goodput_ratio" && p.Kind == "gauge":
			ratio = append(ratio, p.Value)
		}
	}
	if len(ttft) != 2 || !near(ttft[0], 0.050, 0.002) || !near(ttft[1], 0.080, 0.002) {
		t.Errorf("ttft p50 %v, want 0.05 and 0.08", ttft)
	}
	if len(itlCount) != 3 || itlCount[2] != 8*19+10*29 {
		t.Errorf("itl counts %v, want 0, 152, 442", itlCount)
	}
	if len(output) != 3 || output[2] != 460 {
		t.Errorf("output tokens %v, want 0, 160, 460", output)
	}
	if len(ratio) != 2 || ratio[0] != 0.4 || ratio[1] != 1 {
		t.Errorf("goodput ratio %v, want 0.4, 1", ratio)
	}
}

// TestLateSeriesStartWithTheOperation: a counter first seen after the
// operation's first interval (a 5xx in the third second) has its zero at
// the operation's start, so that rate() over the run divides its count by
// the run's length, not by the seconds since its first value.
func TestLateSeriesStartWithTheOperation(t *testing.T) {
	rcv, url := newRWReceiver(t)
	set, err := Start([]Target{{Kind: RemoteWrite, URL: url, Interval: 50 * time.Millisecond}}, Options{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Name: "w"}
	set.Interval(w, interval(0, 10, 0, time.Millisecond))
	set.Interval(w, interval(1, 10, 0, time.Millisecond))
	set.Interval(w, interval(2, 8, 2, time.Millisecond))
	if rep := set.Close(5 * time.Second); !rep[0].OK() {
		t.Fatalf("report %+v", rep)
	}
	got := rcv.get("__name__=perflab_errors_total,class=status_5xx,operation=get,run=r,workload=w")
	ms := func(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixMilli() }
	if len(got) != 2 || got[0].Timestamp != ms(0) || got[0].Value != 0 || got[1].Timestamp != ms(3) || got[1].Value != 2 {
		t.Errorf("errors %v, want 0 at the operation's start (second 0) and 2 at second 3", got)
	}
}
