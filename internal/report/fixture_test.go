package report

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// The fixtures below are built so that every figure in the golden files can
// be checked by hand; the comments give the arithmetic.

var t0 = time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC)

const mib = 1 << 20

func sec(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }

// workload is a summary of n one-second intervals from start, each with 100
// operations of latency 10 ms (service time 9 ms) and 1 KiB received; the
// window leaves out the first interval.
func workload(name, short, profile string, cell int, start time.Time, n int) *analysis.Summary {
	var ivs []*stats.Interval
	for i := range n {
		st := stats.NewOpStats()
		for range 100 {
			st.Latency.Record(10 * time.Millisecond)
			st.Service.Record(9 * time.Millisecond)
		}
		st.Classes[stats.OK] = 100
		st.BytesRecv = 100 * 1024
		ivs = append(ivs, &stats.Interval{Index: i, Start: start.Add(sec(float64(i))), End: start.Add(sec(float64(i + 1))),
			Ops: map[string]*stats.OpStats{"POST /push": st}, Lag: stats.NewHist(), VUs: 2})
	}
	w := analysis.Workload{Name: name, Short: short, Cell: cell, Profile: profile, Driver: "http", Model: "open",
		Target: "POST http://127.0.0.1:3200/push", TargetRate: 100, VUsMin: 2, VUsMax: 10, MaxVUs: 2,
		Start: start, LoadEnd: start.Add(sec(float64(n))), End: start.Add(sec(float64(n))), Scheduled: uint64(100 * n),
		Window: analysis.Window{Start: start.Add(time.Second), End: start.Add(sec(float64(n))), Rule: "test: after the first interval"}}
	return analysis.Summarize(w, ivs)
}

// ticks makes a series of n points one second apart ending at end, the i-th
// (from 1) valued f(i).
func ticks(end time.Time, n int, f func(i int) float64) []analysis.Point {
	ps := make([]analysis.Point, n)
	for i := 1; i <= n; i++ {
		ps[i-1] = analysis.Point{T: end.Add(sec(float64(i - n))), V: f(i)}
	}
	return ps
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

// planComponents are the components of each cell of the plan fixture.
func planComponents() []analysis.Component {
	return []analysis.Component{
		{Name: "ingester-1", Group: "ingester", Kind: "run", PID: 101, MetricsURL: "http://127.0.0.1:3201/metrics",
			DataDirs: []string{"/data/ingester-1"}},
		{Name: "ingester-2", Group: "ingester", Kind: "run", PID: 102, MetricsURL: "http://127.0.0.1:3202/metrics",
			DataDirs: []string{"/data/ingester-2"}},
		{Name: "distributor", Group: "distributor", Kind: "attach", PID: 103},
		{Name: "perflab", Kind: analysis.KindGenerator, PID: 100},
	}
}

// planSeries is 200 samples, at 1 s, of the window (start, start+200s]; i
// counts them from 1. With 200 samples the P99 is the 198th smallest value.
//
//	ingester-1 memory 1024+i MiB: P99 1222 MiB (1.19 GiB), Max 1224 MiB (1.2 GiB), Avg 1124.5 MiB (1.1 GiB)
//	ingester-2 memory 1024+(201−i) MiB: the same figures; the two always add up to 2249 MiB
//	distributor memory 64 MiB
//	memory totals: sum of P99s 1222+1222+64 = 2508 MiB (2.45 GiB), sum of Max 2512 MiB (2.45 GiB),
//	  sum of Avg 2313 MiB (2.26 GiB); summed series constant 2313 MiB (2.26 GiB)
//	ingester-1 CPU 0.5, but 1+0.1(i−190) for i > 190: P99 1.8, Max 2, Avg (95+15.5)/200 = 0.5525
//	ingester-2 CPU 0.2, but 1+0.1i for i ≤ 10: P99 1.8, Max 2, Avg (38+15.5)/200 = 0.2675
//	distributor CPU 0.1
//	CPU totals: sum of P99s 3.7, sum of Max 4.1, sum of Avg 0.92; summed series: 180 × 0.8,
//	  1.6+0.1i (i ≤ 10), 1.3+0.1k (k ≤ 10): P99 = 3rd largest = 2.4, Max 2.6, Avg 0.92
//	ingester-1 heap 256+2i MiB: P99 652 MiB, Max 656 MiB, Avg 457 MiB; GC/min 6 for even i, 3 for odd: Avg 4.5, Max 6
//	ingester-2 heap 300 MiB, GC/min 2
//	ingester-1 disk 10i MiB: end and Max 2000 MiB (1.95 GiB); ingester-2 disk 5·min(i,150) MiB: 750 MiB
//	perflab CPU genCPU of 2 cores, memory 50 MiB, heap 20 MiB, GC/min 12
func planSeries(start time.Time, genCPU float64, memBase float64) map[string]map[string][]analysis.Point {
	end := start.Add(200 * time.Second)
	s := func(f func(int) float64) []analysis.Point { return ticks(end, 200, f) }
	return map[string]map[string][]analysis.Point{
		"ingester-1": {
			"rss_bytes": s(func(i int) float64 { return (memBase + float64(i)) * mib }),
			"cpu_cores": s(func(i int) float64 {
				if i > 190 {
					return 1 + 0.1*float64(i-190)
				}
				return 0.5
			}),
			"go_heap_inuse_bytes": s(func(i int) float64 { return float64(256+2*i) * mib }),
			"gc_per_min": s(func(i int) float64 {
				if i%2 == 0 {
					return 6
				}
				return 3
			}),
			"disk_bytes": s(func(i int) float64 { return float64(10*i) * mib }),
		},
		"ingester-2": {
			"rss_bytes": s(func(i int) float64 { return (memBase + float64(201-i)) * mib }),
			"cpu_cores": s(func(i int) float64 {
				if i <= 10 {
					return 1 + 0.1*float64(i)
				}
				return 0.2
			}),
			"go_heap_inuse_bytes": s(constant(300 * mib)),
			"gc_per_min":          s(constant(2)),
			"disk_bytes":          s(func(i int) float64 { return float64(5*min(i, 150)) * mib }),
		},
		"distributor": {"rss_bytes": s(constant(64 * mib)), "cpu_cores": s(constant(0.1))},
		"perflab": {"cpu_cores": s(constant(genCPU)), "rss_bytes": s(constant(50 * mib)), "cores_available": s(constant(2)),
			"go_heap_inuse_bytes": s(constant(20 * mib)), "gc_per_min": s(constant(12))},
	}
}

// planRun is a matrix of two cells × one profile. In the second cell
// (GOMEMLIMIT 2GiB) the ingesters use 256 MiB less, ingester-2 exits with
// status 2 after 150 of the 200 samples (so the summed memory series has
// 150 sample times), the cell fails, and the generator runs at 1.9 of its 2
// cores, which makes the phase client-bound.
func planRun() *view.Run {
	r := &view.Run{Name: "tempo-gomemlimit", Dir: "/runs/tempo-gomemlimit-20261121-172400", Command: "perflab run tempo.yaml",
		Tool: "perflab 0.1.0", Host: "bench-1", Started: t0, Ended: t0.Add(10 * time.Minute), State: "failed",
		Message: "cell gomemlimit=2GiB,ballast=0 failed"}
	for i, c := range []struct {
		name, limit    string
		genCPU, memAdj float64
	}{{"gomemlimit=off,ballast=0", "off", 0.4, 1024}, {"gomemlimit=2GiB,ballast=0", "2GiB", 1.9, 768}} {
		start := t0.Add(time.Duration(i) * 5 * time.Minute)
		load := start.Add(20 * time.Second)
		cell := &view.Cell{Index: i, Name: c.name, Vars: []view.Var{{Name: "gomemlimit", Value: c.limit}, {Name: "ballast", Value: "0"}}, State: "completed",
			Started: start, Ended: start.Add(4 * time.Minute), Components: planComponents()}
		sum := workload(c.name+"/small/push", "push", "small", i, load, 211)
		win := analysis.Window{Start: load.Add(10 * time.Second), End: load.Add(210 * time.Second), Rule: "warm-up of 10s set by the plan, to the end of load"}
		series := planSeries(win.Start, c.genCPU, c.memAdj)
		phase := &view.Phase{Profile: "small", State: "completed", Start: load, LoadEnd: load.Add(211 * time.Second),
			Warmup: 10 * time.Second, Window: win, Workloads: []*analysis.Summary{sum}}
		if i == 1 {
			exited := win.Start.Add(150500 * time.Millisecond)
			cell.Components[1].Exited, cell.Components[1].ExitText = exited, "exit status 2"
			cell.State, cell.Message = "failed", "component ingester-2 exited: exit status 2"
			phase.State, phase.Message = "failed", "component ingester-2 exited"
			for m, ps := range series["ingester-2"] {
				series["ingester-2"][m] = ps[:150]
			}
		}
		phase.Resources = analysis.SummarizeResources(analysis.ResourceInput{Window: win, Components: cell.Components, Series: series})
		analysis.MarkClientBound(phase.Resources, phase.Workloads)
		cell.Phases = []*view.Phase{phase}
		r.Cells = append(r.Cells, cell)
		r.Workloads = append(r.Workloads, sum)
	}
	return r
}

// singleRun is a run without a plan, like `perflab demo`: two workloads one
// after the other in the implicit cell, with the target and the generator
// sampled.
//
//	"low": 15 samples in its window, target memory 100+i MiB (P99 = Max = 115 MiB
//	  with fewer than 100 samples; Avg 108 MiB), CPU 0.1i (P99 = Max = 1.5, Avg 0.8)
//	"high": only 5 samples: no P99, Max and Avg only (target memory 200 MiB, CPU 2)
func singleRun() *view.Run {
	r := &view.Run{Name: "demo", Dir: "/runs/demo-20261121-172400", Command: "perflab demo", Tool: "perflab 0.1.0",
		Host: "bench-1", Started: t0, Ended: t0.Add(30 * time.Second), State: "completed"}
	comps := []analysis.Component{{Name: "target", Kind: "run", PID: 1234}, {Name: "perflab", Kind: analysis.KindGenerator, PID: 1000}}
	cell := &view.Cell{Implicit: true, Components: comps}
	for _, w := range []struct {
		name     string
		start    time.Time
		n        int
		mem, cpu func(int) float64
	}{
		{"low", t0, 16, func(i int) float64 { return float64(100+i) * mib }, func(i int) float64 { return 0.1 * float64(i) }},
		{"high", t0.Add(20 * time.Second), 6, constant(200 * mib), constant(2)},
	} {
		sum := workload(w.name, "", "", 0, w.start, w.n)
		end := sum.Window.End
		series := map[string]map[string][]analysis.Point{
			"target":  {"rss_bytes": ticks(end, w.n-1, w.mem), "cpu_cores": ticks(end, w.n-1, w.cpu)},
			"perflab": {"cpu_cores": ticks(end, w.n-1, constant(0.3)), "rss_bytes": ticks(end, w.n-1, constant(40*mib))},
		}
		res := analysis.SummarizeResources(analysis.ResourceInput{Window: sum.Window, Components: comps, Series: series, CoresAvailable: 8})
		cell.Phases = append(cell.Phases, &view.Phase{Implicit: true, Window: sum.Window, Workloads: []*analysis.Summary{sum}, Resources: res})
		r.Workloads = append(r.Workloads, sum)
	}
	r.Cells = []*view.Cell{cell}
	return r
}
