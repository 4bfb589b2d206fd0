package resultstest

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// GiB is a gibibyte.
const GiB = 1 << 30

// Profile is one profile of WriteProfiles: the rate its workload get
// asked for and the rate it achieved (requests per second, each of
// Latency), the arrivals it dropped each second, how many of the
// achieved requests failed each second (status 5xx, of the same latency),
// and the CPU (cores) of the component app and of the generator.
type Profile struct {
	Name             string
	Target, Achieved int
	Latency          time.Duration
	Dropped          int
	Failed           int
	AppCPU, GenCPU   float64
}

// WriteProfiles writes a plan run of one cell, default, that ran the
// profiles in order, a minute apart: each 20 one-second intervals of
// workload get (open model, vus.max 50), its window the whole load, and
// the samples of app (a component perflab started, 200 MiB) and of the
// generator (60 MiB) every second, on a machine of 2 cores and 4 GiB.
func WriteProfiles(t *testing.T, dir string, profiles []Profile) string {
	t.Helper()
	store, err := results.Create(dir, results.Meta{Name: "profiles", Started: T0, GoMaxProcs: 2})
	Must(t, err)
	defer store.Close()
	Must(t, store.AddCell(results.Cell{Index: 0, Name: "default", Started: T0}))
	Must(t, store.AddComponent(results.Component{Name: "app", Kind: results.KindRun, PID: 42}))
	Must(t, store.AddComponent(results.Component{Name: "perflab", Kind: results.KindGenerator}))
	for i, p := range profiles {
		start := T0.Add(time.Duration(i) * time.Minute)
		end := start.Add(20 * time.Second)
		Must(t, store.AddPhase(results.Phase{Profile: p.Name, Start: start}))
		w := "default/" + p.Name + "/get"
		Must(t, store.AddWorkload(results.Workload{Name: w, Short: "get", Profile: p.Name, Driver: "http",
			Model: results.ModelOpen, Target: "GET http://app", Rate: float64(p.Target), VUsMin: 1, VUsMax: 50, Duration: 20 * time.Second}))
		for k := range 20 {
			st := stats.NewOpStats()
			for range p.Achieved - p.Failed {
				st.Latency.Record(p.Latency)
				st.Service.Record(p.Latency)
			}
			if p.Failed > 0 {
				st.Failed = stats.NewHist()
			}
			for range p.Failed {
				st.Failed.Record(p.Latency)
			}
			st.Classes[stats.OK], st.Classes[stats.Status5xx] = int64(p.Achieved-p.Failed), int64(p.Failed)
			Must(t, store.WriteInterval(w, &stats.Interval{Index: k, Start: start.Add(time.Duration(k) * time.Second),
				End: start.Add(time.Duration(k+1) * time.Second), Ops: map[string]*stats.OpStats{"GET /": st},
				Dropped: int64(p.Dropped), Lag: stats.NewHist()}))
			Must(t, store.WriteSamples(0, start.Add(time.Duration(k+1)*time.Second), map[string][]results.Sample{
				"app": {{Metric: "cpu_cores", Value: p.AppCPU}, {Metric: "rss_bytes", Value: 200 * MiB}},
				"perflab": {{Metric: "cpu_cores", Value: p.GenCPU}, {Metric: "rss_bytes", Value: 60 * MiB},
					{Metric: "cores_available", Value: 2}, {Metric: "machine_memory_bytes", Value: 4 * GiB}}}))
		}
		Must(t, store.EndWorkload(w, results.WorkloadEnd{Start: start, LoadEnd: end, End: end, Scheduled: uint64(20 * p.Target),
			WindowStart: start, WindowEnd: end, WindowRule: "whole load"}))
		Must(t, store.EndPhase(results.Phase{Profile: p.Name, LoadEnd: end, WindowStart: start, WindowEnd: end,
			WindowRule: "whole load", State: "completed"}))
	}
	Must(t, store.EndCell(0, "completed", "", T0.Add(time.Duration(len(profiles))*time.Minute)))
	Must(t, store.Finish(results.Status{State: "completed"}))
	return store.Dir()
}
