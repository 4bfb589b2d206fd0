package readback

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/view"
)

func loadDir(t *testing.T, dir string) *view.Run {
	t.Helper()
	store, err := results.Open(dir)
	resultstest.Must(t, err)
	defer store.Close()
	r, err := Load(store)
	resultstest.Must(t, err)
	return r
}

func TestLoadRunPlan(t *testing.T) {
	r := loadDir(t, resultstest.WritePlanRun(t, t.TempDir()))
	if len(r.Cells) != 2 || len(r.Workloads) != 2 {
		t.Fatalf("%d cells, %d workloads; want 2 and 2", len(r.Cells), len(r.Workloads))
	}
	c0, c1 := r.Cells[0], r.Cells[1]
	if c0.Implicit || c0.Name != "gomemlimit=off" || c0.Vars[0] != (view.Var{Name: "gomemlimit", Value: "off"}) ||
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
	if res.Ticks != 25 || db.Memory.N != 25 || db.Memory.P99 != 130*resultstest.MiB || db.Memory.Avg != 118*resultstest.MiB || db.CPU.P99 != 0.5 {
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
	resultstest.Must(t, report.Markdown(&md, r))
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
	store, err := results.Create(dir, results.Meta{Name: "http", Started: resultstest.T0})
	resultstest.Must(t, err)
	defer store.Close()
	resultstest.Must(t, store.AddWorkload(results.Workload{Name: "load", Driver: "http", Model: results.ModelOpen, Target: "GET http://x", Rate: 50}))
	resultstest.Intervals(t, store, "load", resultstest.T0, 12)
	resultstest.Must(t, store.EndWorkload("load", results.WorkloadEnd{Start: resultstest.T0, LoadEnd: resultstest.T0.Add(12 * time.Second),
		End: resultstest.T0.Add(12 * time.Second), WindowStart: resultstest.T0.Add(time.Second), WindowEnd: resultstest.T0.Add(12 * time.Second), WindowRule: "rule"}))
	if samples {
		resultstest.Must(t, store.AddComponent(results.Component{Name: "target", Kind: results.KindRun}))
		for i := 1; i <= 12; i++ {
			resultstest.Must(t, store.WriteSamples(0, resultstest.T0.Add(time.Duration(i)*time.Second),
				map[string][]results.Sample{"target": {{Metric: "rss_bytes", Value: float64(i) * resultstest.MiB}}}))
		}
	}
	resultstest.Must(t, store.Finish(results.Status{State: "completed"}))
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
			resultstest.Must(t, report.Markdown(&md, r))
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
			if m.N != 11 || m.P99 != 12*resultstest.MiB || m.Avg != 7*resultstest.MiB {
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
	resultstest.Must(t, err)
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
	resultstest.Must(t, db.Close())
	r := loadDir(t, dir)
	if len(r.Workloads) != 1 || r.Workloads[0].Requests != 550 || len(r.Cells) != 1 || !r.Cells[0].Implicit {
		t.Errorf("version 1 run: %d workloads, cells %+v", len(r.Workloads), r.Cells)
	}
}
