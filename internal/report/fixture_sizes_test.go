package report

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

const gib = 1 << 30

// rateWorkload is a summary of 21 one-second intervals from start with
// perSec operations each of latency lat, each sending sent bytes; the
// window leaves out the first interval (20 s).
func rateWorkload(short, profile string, start time.Time, perSec int, lat time.Duration, sent int64) *analysis.Summary {
	var ivs []*stats.Interval
	for i := range 21 {
		st := stats.NewOpStats()
		for range perSec {
			st.Latency.Record(lat)
			st.Service.Record(lat)
		}
		st.Classes[stats.OK] = int64(perSec)
		st.BytesSent = int64(perSec) * sent
		ivs = append(ivs, &stats.Interval{Index: i, Start: start.Add(sec(float64(i))), End: start.Add(sec(float64(i + 1))),
			Ops: map[string]*stats.OpStats{short: st}, Lag: stats.NewHist(), VUs: 4})
	}
	w := analysis.Workload{Name: profile + "/" + short, Short: short, Profile: profile, Driver: "otlp", Model: "open",
		Target: "http://127.0.0.1:4318", TargetRate: float64(perSec), VUsMin: 2, VUsMax: 20, MaxVUs: 4,
		Start: start, LoadEnd: start.Add(21 * time.Second), End: start.Add(21 * time.Second), Scheduled: uint64(21 * perSec),
		Window: analysis.Window{Start: start.Add(time.Second), End: start.Add(21 * time.Second), Rule: "test: after the first interval"}}
	return analysis.Summarize(w, ivs)
}

// settled is a series of 20 samples in which the first 19 are 0.9 v and
// the last v: P99 = Max = v (20 samples, rank 20), Avg = 0.905 v.
func settled(v float64) func(int) float64 {
	return func(i int) float64 {
		if i == 20 {
			return v
		}
		return 0.9 * v
	}
}

// sizesRun is a plan without a matrix, shaped like the Tempo t-shirt
// report: profiles pico, small and medium push 100, 200 and 400 traces/s
// of 4 KiB (400, 800 and 1600 KiB/s) beside 25 queries/s, for 20 s windows
// of 20 samples (settled: P99 = Max, Avg = 0.905 × P99). P99s:
//
//	              pico      small     medium
//	ingester CPU  0.3       0.5       0.9        = 0.1 + 0.002 × push rate: linear
//	distributor   0.1       0.15      0.25       = 0.05 + 0.0005 × push rate: linear
//	query-fe CPU  0.15      0.15      0.15       constant
//	ingester mem  1.5 GiB   2 GiB     3 GiB      = 1 + 0.005 × push rate GiB: linear
//	distributor   64 MiB    64 MiB    64 MiB     constant
//	query-fe mem  1.3 GiB   1.31 GiB  1.3 GiB    slope not significant, spread 0.8 %: constant
//
// Sizes (p99: request = P99 × 1.25 rounded up, limit = request × 1.5
// rounded up), pico: ingester CPU 0.375 → 380m, limit 570m; memory
// 1.875 GiB = 1920 MiB → 2Gi (256Mi steps), limit 3Gi. distributor 0.125 →
// 130m, limit 195m → 200m; 80 MiB → 96Mi (32Mi steps), limit 144 → 160Mi.
// query-frontend 0.1875 → 190m, limit 285m → 290m; 1.625 GiB = 1664 MiB →
// 1792Mi, limit 2688 → 2816Mi. Total 700m, 1060m, 3936Mi (3.84 GiB), 6048Mi
// (5.91 GiB). The summed memory series has P99 = Max = 1.5 GiB + 64 MiB +
// 1.3 GiB = 2.86 GiB and Avg 0.905 × that = 2.59 GiB in pico.
//
// Scaling of ingester CPU: slope 0.002 cores per request/s = 0.2 cores per
// 100 requests/s, intercept 0.1 cores. Observations: ingester has 1.5 /
// (1.5 + 1.3 + 0.0625) = 52 %, 2 / 3.3725 = 59 % and 3 / 4.3625 = 69 % of the
// memory; 0.3 / 0.55 = 55 %, 0.5 / 0.8 = 62 % and 0.9 / 1.3 = 69 % of the CPU.
func sizesRun() *view.Run {
	r := &view.Run{Name: "tempo-sizing", Dir: "/runs/tempo-sizing-20261121-172400", Command: "perflab run tempo.yaml",
		Tool: "perflab 0.1.0", Host: "bench-1", Started: t0, Ended: t0.Add(2 * time.Minute), State: "completed"}
	comps := []analysis.Component{
		{Name: "ingester", Group: "ingester", Kind: "run", PID: 101},
		{Name: "distributor", Group: "distributor", Kind: "run", PID: 102},
		{Name: "query-frontend", Group: "query", Kind: "run", PID: 103},
		{Name: "perflab", Kind: analysis.KindGenerator, PID: 100},
	}
	cell := &view.Cell{Index: 0, Name: "default", State: "completed", Started: t0, Ended: t0.Add(2 * time.Minute), Components: comps}
	var data []analysis.PhaseData
	for i, p := range []struct {
		name             string
		rate             int
		ingCPU, disCPU   float64
		ingMem, queryMem float64
	}{
		{"pico", 100, 0.3, 0.1, 1.5 * gib, 1.3 * gib},
		{"small", 200, 0.5, 0.15, 2 * gib, 1.31 * gib},
		{"medium", 400, 0.9, 0.25, 3 * gib, 1.3 * gib},
	} {
		start := t0.Add(time.Duration(i) * 30 * time.Second)
		push := rateWorkload("push", p.name, start, p.rate, 10*time.Millisecond, 4096)
		query := rateWorkload("query", p.name, start, 25, 50*time.Millisecond, 0)
		win := push.Window
		s := func(f func(int) float64) []analysis.Point { return ticks(win.End, 20, f) }
		series := map[string]map[string][]analysis.Point{
			"ingester":       {"rss_bytes": s(settled(p.ingMem)), "cpu_cores": s(settled(p.ingCPU))},
			"distributor":    {"rss_bytes": s(settled(64 * mib)), "cpu_cores": s(settled(p.disCPU))},
			"query-frontend": {"rss_bytes": s(settled(p.queryMem)), "cpu_cores": s(settled(0.15))},
			"perflab":        {"rss_bytes": s(constant(40 * mib)), "cpu_cores": s(constant(0.2)), "cores_available": s(constant(2))},
		}
		in := analysis.ResourceInput{Window: win, Components: comps, Series: series}
		phase := &view.Phase{Profile: p.name, State: "completed", Start: start, LoadEnd: start.Add(21 * time.Second),
			Window: win, Workloads: []*analysis.Summary{push, query}, Resources: analysis.SummarizeResources(in)}
		cell.Phases = append(cell.Phases, phase)
		r.Workloads = append(r.Workloads, push, query)
		data = append(data, analysis.PhaseData{Profile: p.name, State: phase.State, Resources: phase.Resources,
			Summaries: phase.Workloads, Sizing: analysis.SizingInputs(in, 0)})
	}
	in, err := analysis.CellInsights(data, analysis.DefaultInsightOptions())
	if err != nil {
		panic(err)
	}
	cell.Insights = in
	r.Cells = []*view.Cell{cell}
	return r
}
