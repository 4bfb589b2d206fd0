// Package resultstest writes synthetic run stores for the tests of the
// packages that read them: intervals of known latency, and a plan run of
// two cells with components, samples, a crash and a failed cell.
package resultstest

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// T0 is when the synthetic runs of the tests start.
var T0 = time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC)

// MiB is a mebibyte.
const MiB = 1 << 20

// Intervals writes n one-second intervals from start, 50 "GET /" of 2 ms each.
func Intervals(t *testing.T, store *results.Run, name string, start time.Time, n int) {
	t.Helper()
	for i := range n {
		st := stats.NewOpStats()
		for range 50 {
			st.Latency.Record(2 * time.Millisecond)
			st.Service.Record(2 * time.Millisecond)
		}
		st.Classes[stats.OK] = 50
		iv := &stats.Interval{Index: i, Start: start.Add(time.Duration(i) * time.Second),
			End: start.Add(time.Duration(i+1) * time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}
		if err := store.WriteInterval(name, iv); err != nil {
			t.Fatal(err)
		}
	}
}

// Must fails the test on err.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// WritePlanRun writes a plan run: two cells × profile "small" of 30 s from
// T0+60s·cell, one workload each, components db and perflab sampled
// every second; db uses (100+i) MiB at sample i and 0.5 cores, perflab 1.9
// of 2 cores in cell 1. db exits in cell 1 after 20 samples; cell 1 fails.
func WritePlanRun(t *testing.T, dir string) string {
	t.Helper()
	store, err := results.Create(dir, results.Meta{Name: "plan", Started: T0, GoMaxProcs: 2})
	Must(t, err)
	defer store.Close()
	for cell, limit := range []string{"off", "1GiB"} {
		start := T0.Add(time.Duration(cell) * time.Minute)
		name := "gomemlimit=" + limit
		Must(t, store.AddCell(results.Cell{Index: cell, Name: name, Vars: []results.Var{{Name: "gomemlimit", Value: limit}}, Started: start}))
		Must(t, store.AddComponent(results.Component{Cell: cell, Name: "db", Group: "storage", Kind: results.KindRun, PID: 42}))
		Must(t, store.AddComponent(results.Component{Cell: cell, Name: "perflab", Kind: results.KindGenerator}))
		Must(t, store.AddPhase(results.Phase{Cell: cell, Profile: "small", Start: start, Warmup: 5 * time.Second}))
		w := name + "/small/get"
		Must(t, store.AddWorkload(results.Workload{Name: w, Short: "get", Cell: cell, Profile: "small", Driver: "http",
			Model: results.ModelOpen, Target: "GET http://db", Rate: 50, VUsMin: 1, VUsMax: 5, Duration: 30 * time.Second}))
		Intervals(t, store, w, start, 30)
		Must(t, store.EndWorkload(w, results.WorkloadEnd{Start: start, LoadEnd: start.Add(30 * time.Second),
			End: start.Add(30 * time.Second), Scheduled: 1500, WindowStart: start.Add(5 * time.Second),
			WindowEnd: start.Add(30 * time.Second), WindowRule: "warm-up 5s"}))
		for i := 1; i <= 30; i++ {
			points := map[string][]results.Sample{
				"perflab": {{Metric: "cpu_cores", Value: []float64{0.2, 1.9}[cell]}, {Metric: "cores_available", Value: 2}}}
			if cell == 0 || i <= 20 {
				points["db"] = []results.Sample{{Metric: "rss_bytes", Value: float64(100+i) * MiB}, {Metric: "cpu_cores", Value: 0.5}}
			}
			Must(t, store.WriteSamples(cell, start.Add(time.Duration(i)*time.Second), points))
		}
		Must(t, store.EndPhase(results.Phase{Cell: cell, Profile: "small", LoadEnd: start.Add(30 * time.Second),
			WindowStart: start.Add(5 * time.Second), WindowEnd: start.Add(30 * time.Second), WindowRule: "warm-up of 5s", State: "completed"}))
		state, msg := "completed", ""
		if cell == 1 {
			Must(t, store.ComponentExited(1, "db", start.Add(20500*time.Millisecond), "exit status 2"))
			state, msg = "failed", "component db exited"
		}
		Must(t, store.EndCell(cell, state, msg, start.Add(31*time.Second)))
	}
	Must(t, store.Finish(results.Status{State: "failed", Message: "a cell failed", ExitCode: 1}))
	return store.Dir()
}
