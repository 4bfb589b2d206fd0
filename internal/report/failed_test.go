package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// failingRun is a run of one workload whose requests are recorded through
// the recorder over 4 s: 60 % refused at once (50 µs), the others answered
// after 20 ms. mixed reads it as a store of results format 2 did.
func failingRun(mixed bool) *view.Run {
	rec := stats.NewRecorder(1, t0)
	var ivs []*stats.Interval
	for i := range 4 {
		start := t0.Add(sec(float64(i)))
		for j := range 100 {
			s := &stats.Sample{Op: "GET /", Intended: start, Start: start, End: start.Add(20 * time.Millisecond)}
			if j%5 < 3 {
				s.End, s.Class, s.Message = start.Add(50*time.Microsecond), stats.Connect, "connection refused"
			}
			rec.Record(0, s)
		}
		iv := rec.Flush(start.Add(time.Second))
		if st := iv.Ops["GET /"]; mixed {
			st.Latency, st.Failed, st.Mixed = st.AllLatency(), nil, true
		}
		ivs = append(ivs, iv)
	}
	w := analysis.Workload{Name: "get", Driver: "http", Model: "open", Target: "GET http://127.0.0.1:1/", TargetRate: 100,
		Start: t0, LoadEnd: t0.Add(sec(4)), End: t0.Add(sec(4)), Window: analysis.Window{Start: t0, End: t0.Add(sec(4)), Rule: "test"}}
	return &view.Run{Name: "errors", Started: t0, State: "completed", Workloads: []*analysis.Summary{analysis.Summarize(w, ivs)}}
}

// TestReportsSeparateFailedLatency: the headline latency of every report
// is the successful requests' (20 ms), not pulled down by the refusals;
// each also gives every request's, and says which is which.
func TestReportsSeparateFailedLatency(t *testing.T) {
	out := render(t, failingRun(false))
	for name, wants := range map[string][]string{
		out.term: {"GET /       400  100.0/s  40.00 %  20.0 ms  20.0 ms", "GET / (all requests)                                50 µs  20.0 ms", "over successful requests (every request's in the rows marked all requests)"},
		out.md: {"| GET / | latency, successful requests (from intended start) | 20.0 ms |", "| GET / | latency, failed requests | 50 µs |",
			"| GET / | latency, all requests | 50 µs |", "are of successful requests only"},
		out.html: {"latency, all requests", "are of successful requests only"},
	} {
		for _, want := range wants {
			if !strings.Contains(name, want) {
				t.Errorf("no %q in\n%s", want, name)
			}
		}
	}
	var got struct {
		Workloads []struct {
			LatencyOf string `json:"latency_of"`
			Latency   jsonQ  `json:"latency_ms"`
			All       *jsonQ `json:"latency_all_ms"`
			Ops       []struct {
				LatencyOf string `json:"latency_of"`
				Latency   jsonQ  `json:"latency_ms"`
				Service   jsonQ  `json:"service_time_ms"`
				Failed    *jsonQ `json:"latency_failed_ms"`
				All       *jsonQ `json:"latency_all_ms"`
			} `json:"operations"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(out.js), &got); err != nil {
		t.Fatal(err)
	}
	w, op := got.Workloads[0], got.Workloads[0].Ops[0]
	if w.LatencyOf != "successful" || w.Latency.P50 < 19.98 || w.All == nil || w.All.Count != 400 || w.All.P50 > 0.1 {
		t.Errorf("workload latency %+v, all %+v, of %q", w.Latency, w.All, w.LatencyOf)
	}
	if op.LatencyOf != "successful" || op.Latency.Count != 160 || op.Latency.P50 < 19.98 || op.Service.Count != 160 ||
		op.Failed == nil || op.Failed.Count != 240 || op.All == nil || op.All.Count != 400 {
		t.Errorf("operation latency %+v, service %+v, failed %+v, all %+v", op.Latency, op.Service, op.Failed, op.All)
	}
}

// TestReportsOfOldStoreSayLatencyIsOfAllRequests: a run read from a store
// that kept failed requests with the successful ones is labelled so.
func TestReportsOfOldStoreSayLatencyIsOfAllRequests(t *testing.T) {
	out := render(t, failingRun(true))
	for text, want := range map[string]string{
		out.term: "over all requests, failed ones too (the run's store, results format 2 or older, did not keep them apart)",
		out.md:   "| GET / | latency, all requests (from intended start) | 50 µs |",
		out.js:   `"latency_of": "all"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Contains(out.js, "latency_all_ms") || strings.Contains(out.md, "failed requests |") {
		t.Error("an old store's report shows a failed-requests latency it does not have")
	}
}
