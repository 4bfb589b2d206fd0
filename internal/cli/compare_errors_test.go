package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/stats"
)

// writeFailingStore writes a run of workload "get" recorded through the
// recorder: 30 intervals of 100 requests, every fifth of which (by index)
// fails at once (50 µs, a refused connection) when index%5 < failEvery;
// the others are answered after 20 ms.
func writeFailingStore(t *testing.T, dir string, failEvery int) string {
	t.Helper()
	store, err := results.Create(dir, results.Meta{Name: "errors", Started: resultstest.T0})
	resultstest.Must(t, err)
	defer store.Close()
	resultstest.Must(t, store.AddWorkload(results.Workload{Name: "get", Driver: "http", Model: results.ModelOpen, Target: "GET http://x", Rate: 100}))
	rec := stats.NewRecorder(1, resultstest.T0)
	for i := range 30 {
		start := resultstest.T0.Add(time.Duration(i) * time.Second)
		for j := range 100 {
			s := &stats.Sample{Op: "GET /", Intended: start, Start: start, End: start.Add(20 * time.Millisecond)}
			if j%5 < failEvery {
				s.End, s.Class, s.Message = start.Add(50*time.Microsecond), stats.Connect, "connection refused"
			}
			rec.Record(0, s)
		}
		resultstest.Must(t, store.WriteInterval("get", rec.Flush(start.Add(time.Second))))
	}
	end := resultstest.T0.Add(30 * time.Second)
	resultstest.Must(t, store.EndWorkload("get", results.WorkloadEnd{Start: resultstest.T0, LoadEnd: end, End: end, Scheduled: 3000,
		WindowStart: resultstest.T0, WindowEnd: end, WindowRule: "whole load"}))
	resultstest.Must(t, store.Finish(results.Status{State: "completed"}))
	return store.Dir()
}

// TestCompareShowsErrorRates: B answers as fast as A but refuses 60 % of
// its requests at once. The latency comparison is of successful requests,
// so it finds no difference (the refusals would have made B look faster),
// and a row beside it gives each side's error rate.
func TestCompareShowsErrorRates(t *testing.T) {
	a := writeFailingStore(t, t.TempDir(), 0)
	b := writeFailingStore(t, t.TempDir(), 3)
	code, out, errs := mainOut("compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c compareOut
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var whats []string
	for _, x := range c.Groups[0].Comparisons {
		got[x.What] = x.Phrase
		whats = append(whats, x.What)
	}
	if strings.Join(whats, ", ") != "request rate, error rate, p50 latency, p99 latency" {
		t.Errorf("comparisons %v", whats)
	}
	for what, want := range map[string]string{"p50 latency": "~", "p99 latency": "~", "error rate": "errors, against none"} {
		if got[what] != want {
			t.Errorf("%s: %q, want %q", what, got[what], want)
		}
	}
	code, out, _ = mainOut("compare", a, b)
	for _, want := range []string{
		"| workload get | error rate | 0 % | 60.00 % | – | – | B has errors, against none |",
		"0 % and 60 % of the requests failed: the latency figures are of successful requests only",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d: no %q in\n%s", code, want, out)
		}
	}
}
