package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/stats"
)

// repeatedStore says what writeRepeatedStore writes.
type repeatedStore struct {
	repeat   int       // meta repeat; 0 writes none (a store of a matrix variable that happens to be named repetition)
	combos   []string  // values of the matrix variable gomemlimit; none: no matrix
	light    []float64 // the light component's CPU in each repetition
	heavyX   float64   // the heavy component's CPU as a multiple of light's
	pairs    bool      // the plan compares light with heavy and get-light with get-heavy
	requests int       // per second per workload
	once     bool      // a run of the plan that was not repeated: one cell, default, without a repetition variable
}

// writeRepeatedStore writes a plan run as perflab run --repeat writes it:
// for each repetition (interleaved) and combination a cell with components
// light, heavy and perflab, one profile steady of 30 one-second intervals
// of get-light and get-heavy (10 ms and 20 ms), sampled every second over
// the window; light uses light[r] cores (× heavyX for heavy) and 100 MiB.
func writeRepeatedStore(t *testing.T, dir string, rs repeatedStore) string {
	t.Helper()
	plan := `{"name":"rep","profiles":[{"name":"steady","duration":"30s"}]}`
	if rs.pairs {
		plan = `{"name":"rep","profiles":[{"name":"steady","duration":"30s"}],"compare":[{"a":"light","b":"heavy"},{"a":"get-light","b":"get-heavy"}]}`
	}
	store, err := results.Create(dir, results.Meta{Name: "rep", Started: resultstest.T0, GoMaxProcs: 2, Repeat: rs.repeat,
		Extra: map[string]string{"plan": plan}})
	resultstest.Must(t, err)
	defer store.Close()
	combos := rs.combos
	if len(combos) == 0 {
		combos = []string{""}
	}
	idx := 0
	for r, cpu := range rs.light {
		for _, combo := range combos {
			writeRepetition(t, store, idx, r+1, combo, cpu, rs)
			idx++
		}
	}
	resultstest.Must(t, store.Finish(results.Status{State: "completed"}))
	return store.Dir()
}

func writeRepetition(t *testing.T, store *results.Run, idx, rep int, combo string, cpu float64, rs repeatedStore) {
	t.Helper()
	var vars []results.Var
	var parts []string
	if combo != "" {
		vars, parts = append(vars, results.Var{Name: "gomemlimit", Value: combo}), append(parts, "gomemlimit="+combo)
	}
	vars, parts = append(vars, results.Var{Name: "repetition", Value: fmt.Sprint(rep)}), append(parts, fmt.Sprintf("repetition=%d", rep))
	name, prefix := strings.Join(parts, ","), strings.Join(parts, ",")+"/"
	if rs.once {
		vars, name, prefix = nil, "default", ""
	}
	start := resultstest.T0.Add(time.Duration(idx) * time.Minute)
	end := start.Add(30 * time.Second)
	resultstest.Must(t, store.AddCell(results.Cell{Index: idx, Name: name, Vars: vars, Started: start}))
	for _, c := range []string{"light", "heavy"} {
		resultstest.Must(t, store.AddComponent(results.Component{Cell: idx, Name: c, Group: c, Kind: results.KindRun, PID: 40}))
	}
	resultstest.Must(t, store.AddComponent(results.Component{Cell: idx, Name: "perflab", Kind: results.KindGenerator}))
	resultstest.Must(t, store.AddPhase(results.Phase{Cell: idx, Profile: "steady", Start: start}))
	for _, w := range []struct {
		short string
		lat   time.Duration
	}{{"get-light", 10 * time.Millisecond}, {"get-heavy", 20 * time.Millisecond}} {
		wn := prefix + "steady/" + w.short
		resultstest.Must(t, store.AddWorkload(results.Workload{Name: wn, Short: w.short, Cell: idx, Profile: "steady", Driver: "http",
			Model: results.ModelOpen, Target: "GET http://x/" + w.short, Rate: float64(rs.requests), VUsMin: 1, VUsMax: 50, Duration: 30 * time.Second}))
		for k := range 30 {
			st := stats.NewOpStats()
			for range rs.requests {
				st.Latency.Record(w.lat)
			}
			st.Classes[stats.OK] = int64(rs.requests)
			resultstest.Must(t, store.WriteInterval(wn, &stats.Interval{Index: k, Start: start.Add(time.Duration(k) * time.Second),
				End: start.Add(time.Duration(k+1) * time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}))
		}
		resultstest.Must(t, store.EndWorkload(wn, results.WorkloadEnd{Start: start, LoadEnd: end, End: end, Scheduled: uint64(30 * rs.requests),
			WindowStart: start, WindowEnd: end, WindowRule: "whole load"}))
	}
	for k := range 30 {
		wobble := 1 + 0.02*math.Sin(float64(k)) // one run's samples vary a little
		resultstest.Must(t, store.WriteSamples(idx, start.Add(time.Duration(k+1)*time.Second), map[string][]results.Sample{
			"light":   {{Metric: "cpu_cores", Value: cpu * wobble}, {Metric: "rss_bytes", Value: 100 * resultstest.MiB}},
			"heavy":   {{Metric: "cpu_cores", Value: rs.heavyX * cpu * wobble}, {Metric: "rss_bytes", Value: 100 * resultstest.MiB}},
			"perflab": {{Metric: "cpu_cores", Value: 0.1}, {Metric: "cores_available", Value: 2}}}))
	}
	resultstest.Must(t, store.EndPhase(results.Phase{Cell: idx, Profile: "steady", LoadEnd: end, WindowStart: start, WindowEnd: end,
		WindowRule: "whole load", State: "completed"}))
	resultstest.Must(t, store.EndCell(idx, "completed", "", end))
}

// TestLoadRepeated: the cells of a repeated run are grouped by
// combination, in the order they ran, each cell knowing its repetition;
// the repetitions are sized and compared together, not one by one.
func TestLoadRepeated(t *testing.T) {
	dir := writeRepeatedStore(t, t.TempDir(), repeatedStore{repeat: 3, combos: []string{"off", "1GiB"},
		light: []float64{0.20, 0.22, 0.18}, heavyX: 2, pairs: true, requests: 50})
	store, err := results.Open(dir)
	resultstest.Must(t, err)
	defer store.Close()
	r, err := readback.Load(store)
	resultstest.Must(t, err)
	if r.Repeat != 3 || len(r.Cells) != 6 || len(r.Repeated) != 2 {
		t.Fatalf("repeat %d, %d cells, %d combinations; want 3, 6, 2", r.Repeat, len(r.Cells), len(r.Repeated))
	}
	for i, g := range r.Repeated {
		want := []string{"gomemlimit=off", "gomemlimit=1GiB"}[i]
		if g.Cell.Name != want || g.Cell.Repetitions != 3 || len(g.Cell.Vars) != 1 || len(g.Repetitions) != 3 {
			t.Errorf("combination %d: %+v", i, g.Cell)
		}
		for j, c := range g.Repetitions {
			if c.Repetition != j+1 || c.Index != 2*j+i || c.Insights != nil || c.SideBySide != nil {
				t.Errorf("%s repetition %d: cell %d, repetition %d, insights %v", want, j+1, c.Index, c.Repetition, c.Insights != nil)
			}
		}
		if g.Cell.Insights == nil || len(g.Cell.Insights.Sizes) != 1 {
			t.Fatalf("%s: no sizes from the pooled samples", want)
		}
		// The 90 light samples pooled: the P99 is the 90th smallest, the largest of repetition 2 (0.22 × 1.02).
		for _, in := range g.Cell.Insights.Sizes[0].Components {
			if in.Component == "light" && in.CPURequest.Value() < 0.22*1.02*1.25 {
				t.Errorf("light's CPU request %v: want at least the pooled P99 0.2244 × 1.25", in.CPURequest)
			}
		}
		if len(g.Profiles) != 1 || g.Profiles[0].Components[0].CPU.N() != 3 || math.Abs(g.Profiles[0].Components[0].CPU.Mean-0.2*1.02) > 0.01 {
			t.Errorf("%s: figures %+v", want, g.Profiles)
		}
		sbs := g.Cell.SideBySide
		if len(sbs) != 2 || sbs[0].Repetitions != 3 || len(sbs[0].Groups) != 1 {
			t.Fatalf("%s: side by side %+v", want, sbs)
		}
		cpu := sbs[0].Groups[0].Comparisons[0]
		if cpu.What != "CPU" || cpu.Ratio.NA != 3 || !strings.Contains(cpu.Ratio.Method, "Fieller") ||
			math.Abs(cpu.Ratio.Value-2) > 0.01 || !(cpu.Ratio.Low > 1.5) || cpu.Phrase != "x2.0 more CPU" {
			t.Errorf("%s: heavy against light %+v", want, cpu)
		}
		lat := sbs[1].Groups[0].Comparisons
		if len(lat) != 3 || lat[2].What != "p99 latency" || lat[2].Ratio.NA != 3 || math.Abs(lat[2].Ratio.Value-2) > 0.01 {
			t.Errorf("%s: get-heavy against get-light %+v", want, lat)
		}
	}
	// perflab size sizes the combinations again, from the pooled samples.
	code, out, errs := mainOut("size", dir, "--headroom", "0%")
	if code != 0 || strings.Count(out, "## Across 3 repetitions: ") != 2 || !strings.Contains(out, "## Across 3 repetitions: `gomemlimit=1GiB`") ||
		strings.Contains(out, "repetition=") {
		t.Errorf("perflab size: exit %d %s\n%s", code, errs, out)
	}
}

// TestRepetitionVariableWithoutRepeat: a store without the meta key repeat
// (a plan whose matrix had a variable named repetition, before the name was
// reserved) is a matrix like any other: every cell sized and compared on
// its own.
func TestRepetitionVariableWithoutRepeat(t *testing.T) {
	dir := writeRepeatedStore(t, t.TempDir(), repeatedStore{light: []float64{0.2, 0.2}, heavyX: 2, pairs: true, requests: 50})
	store, err := results.Open(dir)
	resultstest.Must(t, err)
	defer store.Close()
	r, err := readback.Load(store)
	resultstest.Must(t, err)
	if r.Repeated != nil || r.Cells[0].Insights == nil || r.Cells[1].SideBySide == nil || r.Cells[0].Repetition != 0 {
		t.Errorf("repeated %v, cell 0 insights %v", r.Repeated, r.Cells[0].Insights)
	}
}

// TestCompareRepeatedRuns: perflab compare takes each repetition of a
// repeated run as a run: Fieller's interval from 3 and 3; a run that was
// not repeated matches the same workloads by their names without the
// repetition.
func TestCompareRepeatedRuns(t *testing.T) {
	a := writeRepeatedStore(t, t.TempDir(), repeatedStore{repeat: 3, light: []float64{0.20, 0.22, 0.18}, heavyX: 1, requests: 50})
	b := writeRepeatedStore(t, t.TempDir(), repeatedStore{repeat: 3, light: []float64{0.41, 0.39, 0.40}, heavyX: 0.5, requests: 50})
	a2 := writeRepeatedStore(t, t.TempDir(), repeatedStore{repeat: 3, light: []float64{0.19, 0.21, 0.205}, heavyX: 1, requests: 50})
	code, out, errs := mainOut("compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c struct {
		Method string `json:"method"`
		Groups []struct {
			Name        string `json:"name"`
			Comparisons []struct {
				Subject, What, Phrase, Method string
				NA                            int `json:"n_a"`
				Ratio, Low, High              *float64
			} `json:"comparisons"`
		} `json:"groups"`
	}
	resultstest.Must(t, json.Unmarshal([]byte(out), &c))
	if len(c.Groups) != 1 || c.Groups[0].Name != "Profile `steady`" || !strings.Contains(c.Method, "3 on side A, 3 on side B") {
		t.Fatalf("groups %+v, method %q", c.Groups, c.Method)
	}
	got := map[string]string{}
	for _, x := range c.Groups[0].Comparisons {
		got[x.Subject+" "+x.What] = x.Phrase
		if x.Subject == "light" && x.What == "CPU" && (x.NA != 3 || !strings.Contains(x.Method, "Fieller") || *x.Low <= 1) {
			t.Errorf("light CPU: %+v", x)
		}
	}
	// light doubles; heavy (light × 1 in A, × 0.5 in B) stays the same.
	for k, v := range map[string]string{"light CPU": "x2.0 more CPU", "heavy CPU": "~", "light memory": "~",
		"workload get-light p99 latency": "~"} {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	code, out, _ = mainOut("compare", a, a2)
	if code != 0 || !strings.Contains(out, "| light | CPU |") || strings.Contains(out, "B uses") {
		t.Errorf("the same system three times each: exit %d\n%s", code, out)
	}
	once := writeRepeatedStore(t, t.TempDir(), repeatedStore{once: true, light: []float64{0.2}, heavyX: 1, requests: 50})
	code, out, errs = mainOut("compare", once, a)
	if code != 0 || !strings.Contains(out, "## Profile `steady`") || !strings.Contains(out, "1 and 3 runs") {
		t.Errorf("a run against a repeated one: exit %d %s\n%s", code, errs, out)
	}
}

// TestRunRepeatFlag: --repeat and the plan's repeat are checked before
// anything starts (exit 2, no run directory), and plan check shows the
// repetitions.
func TestRunRepeatFlag(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	body := "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: http, rate: 1/s, params: {url: \"http://127.0.0.1:1/\"}}]}]\n"
	resultstest.Must(t, os.WriteFile(plan, []byte(body), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	resultstest.Must(t, os.WriteFile(bad, []byte("name: x\nrepeat: 0\n"+body[len("name: x\n"):]), 0o644))
	out := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", plan, "--repeat", "0", "--out", out}, "--repeat 0: want 1 (every cell once) to 100"},
		{[]string{"run", plan, "--repeat", "-3", "--out", out}, "--repeat -3"},
		{[]string{"run", plan, "--repeat", "101", "--out", out}, "--repeat 101"},
		{[]string{"run", plan, "--repeat", "three", "--out", out}, `--repeat "three": want a whole number, like 10 (see perflab run --help)`},
		{[]string{"run", bad, "--out", out}, "bad.yaml:2:9: repeat 0: want 1 or more"},
		{[]string{"plan", "check", plan, "--repeat", "0"}, "--repeat 0"},
	} {
		code, _, errs := mainOut(tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s", tc.args, code, ExitUsage, tc.want, errs)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run directory parent was made: %v", err)
	}
	code, stdout, errs := mainOut("plan", "check", plan, "--repeat", "3")
	if code != 0 || !strings.Contains(stdout, "cells: 3: no matrix × 3 repetitions, interleaved") || !strings.Contains(stdout, "3s in all") {
		t.Errorf("plan check --repeat 3: exit %d %s\n%s", code, errs, stdout)
	}
}
