package cli

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

var loadT0 = time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC)

const loadMiB = 1 << 20

// loadIntervals writes n one-second intervals from start, 50 "GET /" of 2 ms each.
func loadIntervals(t *testing.T, store *results.Run, name string, start time.Time, n int) {
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

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeLoadPlan writes a plan run: two cells × profile "small" of 30 s from
// loadT0+60s·cell, one workload each, components db and perflab sampled
// every second; db uses (100+i) MiB at sample i and 0.5 cores, perflab 1.9
// of 2 cores in cell 1. db exits in cell 1 after 20 samples; cell 1 fails.
func writeLoadPlan(t *testing.T, dir string) string {
	store, err := results.Create(dir, results.Meta{Name: "plan", Started: loadT0, GoMaxProcs: 2})
	must(t, err)
	defer store.Close()
	for cell, limit := range []string{"off", "1GiB"} {
		start := loadT0.Add(time.Duration(cell) * time.Minute)
		name := "gomemlimit=" + limit
		must(t, store.AddCell(results.Cell{Index: cell, Name: name, Vars: []results.Var{{Name: "gomemlimit", Value: limit}}, Started: start}))
		must(t, store.AddComponent(results.Component{Cell: cell, Name: "db", Group: "storage", Kind: results.KindRun, PID: 42}))
		must(t, store.AddComponent(results.Component{Cell: cell, Name: "perflab", Kind: results.KindGenerator}))
		must(t, store.AddPhase(results.Phase{Cell: cell, Profile: "small", Start: start, Warmup: 5 * time.Second}))
		w := name + "/small/get"
		must(t, store.AddWorkload(results.Workload{Name: w, Short: "get", Cell: cell, Profile: "small", Driver: "http",
			Model: results.ModelOpen, Target: "GET http://db", Rate: 50, VUsMin: 1, VUsMax: 5, Duration: 30 * time.Second}))
		loadIntervals(t, store, w, start, 30)
		must(t, store.EndWorkload(w, results.WorkloadEnd{Start: start, LoadEnd: start.Add(30 * time.Second),
			End: start.Add(30 * time.Second), Scheduled: 1500, WindowStart: start.Add(5 * time.Second),
			WindowEnd: start.Add(30 * time.Second), WindowRule: "warm-up 5s"}))
		for i := 1; i <= 30; i++ {
			points := map[string][]results.Sample{
				"perflab": {{Metric: "cpu_cores", Value: []float64{0.2, 1.9}[cell]}, {Metric: "cores_available", Value: 2}}}
			if cell == 0 || i <= 20 {
				points["db"] = []results.Sample{{Metric: "rss_bytes", Value: float64(100+i) * loadMiB}, {Metric: "cpu_cores", Value: 0.5}}
			}
			must(t, store.WriteSamples(cell, start.Add(time.Duration(i)*time.Second), points))
		}
		must(t, store.EndPhase(results.Phase{Cell: cell, Profile: "small", LoadEnd: start.Add(30 * time.Second),
			WindowStart: start.Add(5 * time.Second), WindowEnd: start.Add(30 * time.Second), WindowRule: "warm-up of 5s", State: "completed"}))
		state, msg := "completed", ""
		if cell == 1 {
			must(t, store.ComponentExited(1, "db", start.Add(20500*time.Millisecond), "exit status 2"))
			state, msg = "failed", "component db exited"
		}
		must(t, store.EndCell(cell, state, msg, start.Add(31*time.Second)))
	}
	must(t, store.Finish(results.Status{State: "failed", Message: "a cell failed", ExitCode: 1}))
	return store.Dir()
}

func loadDir(t *testing.T, dir string) *report.Run {
	t.Helper()
	store, err := results.Open(dir)
	must(t, err)
	defer store.Close()
	r, err := loadRun(store)
	must(t, err)
	return r
}

func TestLoadRunPlan(t *testing.T) {
	r := loadDir(t, writeLoadPlan(t, t.TempDir()))
	if len(r.Cells) != 2 || len(r.Workloads) != 2 {
		t.Fatalf("%d cells, %d workloads; want 2 and 2", len(r.Cells), len(r.Workloads))
	}
	c0, c1 := r.Cells[0], r.Cells[1]
	if c0.Implicit || c0.Name != "gomemlimit=off" || c0.Vars[0] != (report.Var{Name: "gomemlimit", Value: "off"}) ||
		c1.State != "failed" || len(c1.Components) != 2 || c1.Components[0].ExitText != "exit status 2" {
		t.Errorf("cells: %+v / %+v", c0, c1)
	}
	p0, p1 := c0.Phases[0], c1.Phases[0]
	if len(c0.Phases) != 1 || p0.Profile != "small" || p0.Warmup != 5*time.Second || len(p0.Workloads) != 1 ||
		p0.Workloads[0].Workload.Short != "get" || p0.Window.Rule != "warm-up of 5s" {
		t.Fatalf("phase of cell 0: %+v", p0)
	}
	// Window (5 s, 30 s]: samples 6…30, db memory 106…130 MiB: P99 = Max = 130 MiB, Avg 118 MiB.
	res := p0.Resources
	db := res.Components[0]
	if res.Ticks != 25 || db.Memory.N != 25 || db.Memory.P99 != 130*loadMiB || db.Memory.Avg != 118*loadMiB || db.CPU.P99 != 0.5 {
		t.Errorf("cell 0 resources: %d ticks, db memory %+v cpu %+v", res.Ticks, db.Memory, db.CPU)
	}
	if res.ClientBound || p0.Workloads[0].ClientBound {
		t.Error("cell 0 is client-bound at 0.2 of 2 cores")
	}
	// Cell 1: db stops after sample 20 (15 in the window); the generator is at 1.9 of 2 cores.
	if db1 := p1.Resources.Components[0]; db1.Memory.N != 15 || !p1.Resources.ClientBound || !p1.Workloads[0].ClientBound {
		t.Errorf("cell 1: db memory %+v, client-bound %v/%v", db1.Memory, p1.Resources.ClientBound, p1.Workloads[0].ClientBound)
	}
	var md bytes.Buffer
	must(t, report.Markdown(&md, r))
	for _, want := range []string{"## Matrix summary", "| off | small | db | – | – | 0.50 | 130 MiB |",
		"## Cell `gomemlimit=1GiB`", "#### Workload `get`", "#### Resources (window 17:24:05–17:24:30 UTC, 25 samples at 1s)",
		"Component `db` of cell `gomemlimit=1GiB` exited during the run at 17:25:20 UTC: exit status 2"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md.String())
	}
}

// writeLoadHTTP writes a run without a plan, like `perflab http`: one
// workload in the implicit cell 0, its target sampled as component "target".
func writeLoadHTTP(t *testing.T, dir string, samples bool) string {
	store, err := results.Create(dir, results.Meta{Name: "http", Started: loadT0})
	must(t, err)
	defer store.Close()
	must(t, store.AddWorkload(results.Workload{Name: "load", Driver: "http", Model: results.ModelOpen, Target: "GET http://x", Rate: 50}))
	loadIntervals(t, store, "load", loadT0, 12)
	must(t, store.EndWorkload("load", results.WorkloadEnd{Start: loadT0, LoadEnd: loadT0.Add(12 * time.Second),
		End: loadT0.Add(12 * time.Second), WindowStart: loadT0.Add(time.Second), WindowEnd: loadT0.Add(12 * time.Second), WindowRule: "rule"}))
	if samples {
		must(t, store.AddComponent(results.Component{Name: "target", Kind: results.KindRun}))
		for i := 1; i <= 12; i++ {
			must(t, store.WriteSamples(0, loadT0.Add(time.Duration(i)*time.Second),
				map[string][]results.Sample{"target": {{Metric: "rss_bytes", Value: float64(i) * loadMiB}}}))
		}
	}
	must(t, store.Finish(results.Status{State: "completed"}))
	return store.Dir()
}

func TestLoadRunWithoutPlan(t *testing.T) {
	for _, samples := range []bool{false, true} {
		t.Run(fmt.Sprint("samples=", samples), func(t *testing.T) {
			r := loadDir(t, writeLoadHTTP(t, t.TempDir(), samples))
			if len(r.Cells) != 1 || !r.Cells[0].Implicit || len(r.Cells[0].Phases) != 1 || !r.Cells[0].Phases[0].Implicit {
				t.Fatalf("cells: %+v", r.Cells)
			}
			p := r.Cells[0].Phases[0]
			var md bytes.Buffer
			must(t, report.Markdown(&md, r))
			if !strings.Contains(md.String(), "\n## Workload `load`\n") || strings.Contains(md.String(), "Matrix") {
				t.Errorf("report shape changed:\n%s", md.String())
			}
			if !samples {
				if p.Resources != nil || strings.Contains(md.String(), "Resources") {
					t.Errorf("resources without samples: %+v", p.Resources)
				}
				return
			}
			// Window (1 s, 12 s]: samples 2…12 MiB: 11 samples, P99 = Max = 12 MiB, Avg 7 MiB.
			m := p.Resources.Components[0].Memory
			if m.N != 11 || m.P99 != 12*loadMiB || m.Avg != 7*loadMiB {
				t.Errorf("target memory %+v", m)
			}
			if !strings.Contains(md.String(), "### Resources (window 17:24:01–17:24:12 UTC, 11 samples at 1s)") {
				t.Errorf("no resources section:\n%s", md.String())
			}
		})
	}
}

// TestLoadRunVersion1 turns a run into a version 1 store (the version 2
// tables and columns dropped) and reads it.
func TestLoadRunVersion1(t *testing.T) {
	dir := writeLoadHTTP(t, t.TempDir(), false)
	db, err := sql.Open("sqlite", filepath.Join(dir, results.DBName))
	must(t, err)
	for _, q := range []string{
		`DROP TABLE samples`, `DROP TABLE metrics`, `DROP TABLE components`, `DROP TABLE phases`,
		`DROP TABLE cell_vars`, `DROP TABLE cells`, `ALTER TABLE workloads DROP COLUMN cell`,
		`ALTER TABLE workloads DROP COLUMN profile`, `ALTER TABLE workloads DROP COLUMN short`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(t, db.Close())
	r := loadDir(t, dir)
	if len(r.Workloads) != 1 || r.Workloads[0].Requests != 550 || len(r.Cells) != 1 || !r.Cells[0].Implicit {
		t.Errorf("version 1 run: %d workloads, cells %+v", len(r.Workloads), r.Cells)
	}
}

// TestStagesKeepTheirStart: a plan workload's stages are stored with the
// rate before the first stage (byte rates divided into operations), and
// read back as the schedule reports show; so are the closed model's.
func TestStagesKeepTheirStart(t *testing.T) {
	open := plan.Workload{Name: "get", Model: plan.Open, StartRate: plan.Rate{BytesPerSecond: 10_000},
		Stages: []plan.Stage{{Duration: 30 * time.Second, Rate: plan.Rate{BytesPerSecond: 200_000}}, {Duration: time.Minute, Rate: plan.Rate{BytesPerSecond: 200_000}}}}
	closed := plan.Workload{Name: "c", Model: plan.Closed, StartConcurrency: 2, Stages: []plan.Stage{{Duration: 10 * time.Second, Concurrency: 50}}}
	for _, tt := range []struct {
		w     plan.Workload
		start float64
		text  string
	}{
		{open, 10, "ramp 10 → 200/s over 30 s, 200/s for 60 s"}, // 1000 bytes per operation
		{closed, 2, "ramp 2 → 50 VUs over 10 s"},
	} {
		var eng engine.Workload
		var desc results.Workload
		if err := schedule(tt.w, 2*time.Minute, 1000, &eng, &desc); err != nil {
			t.Fatal(err)
		}
		s, err := analysis.ParseSchedule(desc.Stages)
		unit := "/s"
		if tt.w.Model == plan.Closed {
			unit = " VUs"
		}
		if err != nil || s == nil || s.Start != tt.start || s.Text(unit) != tt.text {
			t.Errorf("%s: stored %s, read %+v, %v", tt.w.Name, desc.Stages, s, err)
		}
	}
}
