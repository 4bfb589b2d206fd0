//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// matrixPlan starts the built-in target afresh in each of four cells, at
// 2 or 20 ms and answering no or 10 % of its requests with a 500 (%[1]d
// its port), and loads it at 100 requests/s for 4 s, exporting to the
// remote write URL %[2]s.
const matrixPlan = `name: cells
sample_interval: 250ms
matrix:
  latency: [2ms, 20ms]
  errors: ["0", "0.1"]
components:
  - name: api
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, "{{latency}}", --error-rate, "{{errors}}"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: http://127.0.0.1:%[1]d/metrics
export:
  - {kind: remote-write, url: "%[2]s", interval: 500ms}
profiles:
  - name: steady
    duration: 4s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`

// repeatedPlan has no matrix: the built-in target at 5 ms without errors
// (%[1]d its port), loaded at 50 requests/s for 4 s, exporting to %[2]s.
const repeatedPlan = `name: reps
sample_interval: 250ms
components:
  - name: api
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 5ms]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: http://127.0.0.1:%[1]d/metrics
export:
  - {kind: remote-write, url: "%[2]s", interval: 500ms}
profiles:
  - name: steady
    duration: 4s
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`

// TestDashboardCells runs a plan of four matrix cells, then a plan without
// a matrix with --repeat 2 (two cells, repetition=1 and 2), then an openai
// plan of two cells against the built-in mock, all exporting to
// VictoriaMetrics, and checks every panel of the shipped Grafana
// dashboard against each run's summary.json, cell by cell: cells that ran
// one after the other are neither added together nor shown under one
// legend, a cell without errors shows 0 errors, and the LLM panels show
// the openai run's cells and nothing of the others.
func TestDashboardCells(t *testing.T) {
	t.Parallel()
	machine := testutil.Measure(t)
	vm := testutil.StartVictoriaMetrics(t)
	port, write := testutil.FreePort(t), vm+"/api/v1/write"
	matrix := exportedRun(t, fmt.Sprintf(matrixPlan, port, write))
	repeated := exportedRun(t, fmt.Sprintf(repeatedPlan, port, write), "--repeat", "2")
	llm := exportedRun(t, fmt.Sprintf(llmPlan, port, write))
	if len(matrix.Cells) != 4 || len(repeated.Cells) != 2 || repeated.Cells[1].Name != "repetition=2" || len(llm.Cells) != 2 {
		t.Fatalf("cells %+v, %+v and %+v, want 4, 2 and 2", matrix.Cells, repeated.Cells, llm.Cells)
	}
	d := readDashboard(t)
	for title := range llmPanelChecks {
		if !slices.ContainsFunc(d.Panels, func(p dashPanel) bool { return p.Title == title }) {
			t.Errorf("the dashboard has no panel %q", title)
		}
	}
	for _, r := range []dashRun{matrix, repeated, llm} {
		t.Run(r.id, func(t *testing.T) { checkDashboard(t, d, vm, r, machine) })
	}
	t.Run("llm-totals", func(t *testing.T) { checkLLMTotals(t, vm, llm) })
	t.Run("both", func(t *testing.T) {
		// Every run picked in Run: every series still has a legend of its own.
		for _, p := range d.Panels {
			legends(t, p, panelSeries(t, vm, p, regexVar(matrix.id, repeated.id, llm.id), ".*", llm.end()))
		}
	})
}

// dashRun is a run the dashboard is checked against: its directory's name,
// which the series carry as run, and its summary.json.
type dashRun struct {
	id string
	dashSummary
	whole map[string]wholeOp // by workload and operation: see wholeKey
}

// dashSummary is what the dashboard's test reads of summary.json.
type dashSummary struct {
	Workloads []struct {
		Name          string                         `json:"name"`
		Short         string                         `json:"short"`
		Driver        string                         `json:"driver"`
		Cell          int                            `json:"cell"`
		Profile       string                         `json:"profile"`
		RequestsTotal int64                          `json:"requests_total"`
		ErrorsTotal   int64                          `json:"errors_total"`
		DroppedTotal  int64                          `json:"dropped_total"`
		Unissued      int64                          `json:"unissued"`
		MaxVUsUsed    int64                          `json:"max_vus_used"`
		Lag           quant                          `json:"scheduler_lag_ms"`
		Facts         []struct{ Name, Value string } `json:"facts"`
		Ops           []struct {
			Name string `json:"name"`
		} `json:"operations"`
	} `json:"workloads"`
	Cells []struct {
		Name       string    `json:"name"`
		Started    time.Time `json:"started"`
		Ended      time.Time `json:"ended"`
		Components []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"components"`
		Phases []struct {
			Profile   string    `json:"profile"`
			Start     time.Time `json:"start"`
			LoadEnd   time.Time `json:"load_end"`
			Resources struct {
				Cores float64 `json:"cores_available"`
			} `json:"resources"`
		} `json:"phases"`
	} `json:"cells"`
}

// exportedRun runs plan (which exports) with args and reads its summary.
func exportedRun(t *testing.T, plan string, args ...string) dashRun {
	t.Helper()
	r := run(t, append([]string{"run", writePlan(t, plan), "--out", t.TempDir()}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	return dashRunOf(t, runDir(t, r.stderr))
}

func dashRunOf(t *testing.T, dir string) dashRun {
	t.Helper()
	r := dashRun{id: filepath.Base(dir), whole: map[string]wholeOp{}}
	readSummary(t, dir, &r.dashSummary, "")
	for _, w := range r.Workloads {
		for _, iv := range intervalsOf(t, dir, w.Name) {
			for name, op := range iv.Ops {
				k := wholeKey(w.Name, name)
				r.whole[k] = r.whole[k].add(op)
			}
		}
	}
	return r
}

// wholeOp is an operation's figures over its whole load, as the exporter
// sent them: every interval's, the first (outside the window) too, read
// from the run's store.
type wholeOp struct {
	classes      []string // the error classes
	count        float64  // successful operations
	latencySum   float64  // seconds: each interval's mean × its count, as exported
	measureCount [stats.NumMeasures]float64
	measureSum   [stats.NumMeasures]float64
	// hists and measureHists are the histograms of the intervals with a
	// value, in order: a panel of per-interval quantiles shows at the end
	// each quantile of the last one with the values it needs.
	hists        []*stats.Hist
	measureHists [stats.NumMeasures][]*stats.Hist
}

func (w wholeOp) add(op *stats.OpStats) wholeOp {
	for cl := stats.OK + 1; cl < stats.NumClasses; cl++ {
		if op.Classes[cl] > 0 && !slices.Contains(w.classes, cl.String()) {
			w.classes = append(w.classes, cl.String())
		}
	}
	n := float64(op.Latency.Count())
	w.count, w.latencySum = w.count+n, w.latencySum+op.Latency.Mean().Seconds()*n
	if n > 0 {
		w.hists = append(w.hists, op.Latency)
	}
	for m, h := range op.Measures {
		if h != nil && h.Count() > 0 {
			n := float64(h.Count())
			w.measureCount[m], w.measureSum[m] = w.measureCount[m]+n, w.measureSum[m]+h.Mean().Seconds()*n
			w.measureHists[m] = append(w.measureHists[m], h)
		}
	}
	return w
}

// measureMean is the whole load's mean of the measure named name, in
// seconds; NaN when it has none.
func (w wholeOp) measureMean(name string) float64 {
	m, err := stats.ParseMeasure(name)
	if err != nil || w.measureCount[m] == 0 {
		return math.NaN()
	}
	return w.measureSum[m] / w.measureCount[m]
}

func wholeKey(workload, op string) string { return workload + "\x00" + op }

// end is when the run's last cell ended.
func (r dashRun) end() time.Time { return r.Cells[len(r.Cells)-1].Ended }

// figure is what summary.json and the store say of one operation of a
// workload in one cell: the counts over its whole load, which the
// dashboard's rates at the run's end cover, and its intervals' figures.
type figure struct {
	labels                              map[string]string // cell, profile, workload, operation
	components                          []string          // the cell's, the generator aside
	seconds                             float64           // the load's length
	requests, errors, dropped, unissued float64
	whole                               wholeOp // over the whole load, from the store
	lagMax                              float64 // ms
	vusMax, cores                       float64
	llm                                 // an openai workload's
}

// figures are the run's figures, one per operation of a workload of a cell.
func (r dashRun) figures(t *testing.T) []figure {
	var out []figure
	for _, w := range r.Workloads {
		c := r.Cells[w.Cell]
		f := figure{requests: float64(w.RequestsTotal), errors: float64(w.ErrorsTotal), dropped: float64(w.DroppedTotal),
			unissued: float64(w.Unissued), lagMax: w.Lag.Max, vusMax: float64(w.MaxVUsUsed)}
		for _, ph := range c.Phases {
			if ph.Profile == w.Profile {
				f.seconds, f.cores = ph.LoadEnd.Sub(ph.Start).Seconds(), ph.Resources.Cores
			}
		}
		for _, comp := range c.Components {
			if comp.Kind != "generator" { // the generator has panels of its own
				f.components = append(f.components, comp.Name)
			}
		}
		if w.Driver == "openai" {
			f.llm = llmOf(t, w.Facts)
		}
		for _, op := range w.Ops {
			f.labels = map[string]string{"cell": c.Name, "profile": w.Profile, "workload": w.Short, "operation": op.Name}
			f.whole = r.whole[wholeKey(w.Name, op.Name)]
			out = append(out, f)
		}
	}
	return out
}

// key is the values of the labels by, in order.
func key(ls map[string]string, by []string) string {
	var b strings.Builder
	for _, l := range by {
		fmt.Fprintf(&b, "%s=%q ", l, ls[l])
	}
	return strings.TrimSpace(b.String())
}

// expected is the keys by the labels pc.by (cell, profile, workload,
// operation or component) that a panel shows a series of, each with its
// figure: of the figures pc.of takes.
func (r dashRun) expected(t *testing.T, pc panelCheck) map[string]figure {
	by, out := pc.by, map[string]figure{}
	for _, f := range r.figures(t) {
		if pc.of != nil && !pc.of(f) {
			continue
		}
		if !slices.Contains(by, "component") {
			out[key(f.labels, by)] = f
			continue
		}
		for _, c := range f.components {
			out[key(map[string]string{"cell": f.labels["cell"], "component": c}, by)] = f
		}
	}
	return out
}

// dashboard is what the test reads of dashboards/perflab.json.
type dashboard struct {
	Panels     []dashPanel `json:"panels"`
	Templating struct {
		List []dashVariable `json:"list"`
	} `json:"templating"`
}

type dashVariable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Definition string `json:"definition"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
}

type dashPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "dashboards", "perflab.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Panels) < 10 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	return d
}

// rateInterval is $__rate_interval as Grafana sets it over its default
// time range (30 minutes) with a data source's default scrape interval
// (15 s): four of them. At the end of a run shorter than that, a rate
// covers the whole of every cell's load.
const rateInterval = time.Minute

// regexVar is a variable of the values picked, as Grafana puts it in a
// PromQL regular expression: each value's metacharacters escaped (the
// backslash twice, inside a PromQL string), several as (a|b).
func regexVar(values ...string) string {
	for i, v := range values {
		values[i] = strings.ReplaceAll(regexp.QuoteMeta(v), `\`, `\\`)
	}
	if len(values) == 1 {
		return values[0]
	}
	return "(" + strings.Join(values, "|") + ")"
}

// panelSample is one series of a panel's target at an instant.
type panelSample struct {
	ref, legend string
	labels      map[string]string
	v           float64
}

// panelSeries runs every target of p at the instant at, $run and $cell
// set to the regular expressions run and cell.
func panelSeries(t *testing.T, vm string, p dashPanel, run, cell string, at time.Time) []panelSample {
	t.Helper()
	expand := strings.NewReplacer("$run", run, "$cell", cell, "$__rate_interval", rateInterval.String())
	var out []panelSample
	for _, tg := range p.Targets {
		q := expand.Replace(tg.Expr)
		if strings.Contains(q, "$") {
			t.Fatalf("panel %q: %s has a variable the test does not know", p.Title, q)
		}
		for _, s := range promQuery(t, vm, q, time.Time{}, at, 0) {
			out = append(out, panelSample{ref: tg.RefID, legend: legend(tg.LegendFormat, s.Metric), labels: s.Metric, v: sampleValue(t, s.Value[1])})
		}
	}
	return out
}

var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend is a legend format with labels' values, as Grafana shows it.
func legend(format string, ls map[string]string) string {
	return legendLabel.ReplaceAllStringFunc(format, func(m string) string {
		return ls[legendLabel.FindStringSubmatch(m)[1]]
	})
}

// legends fails when two of a panel's series have one legend.
func legends(t *testing.T, p dashPanel, ss []panelSample) {
	t.Helper()
	seen := map[string]map[string]string{}
	for _, s := range ss {
		if other, ok := seen[s.legend]; ok {
			t.Errorf("panel %q: %v and %v both show as %q", p.Title, other, s.labels, s.legend)
		}
		seen[s.legend] = s.labels
	}
}

// checkDashboard checks every panel of d against run r exported to the
// Prometheus API at vm, as Grafana shows them at the run's end with $run
// the run and $cell All: each shows a series per cell (and profile,
// workload, operation or component, as the panel goes) under a legend of
// its own, and with figures its figure is the summary's (VictoriaMetrics'
// rate: Prometheus' extrapolates over the whole interval). Then $cell set
// to one cell shows that cell alone.
// figures, when set, is the machine the run's figures are judged against:
// a panel's figure that misses the summary's on a machine too busy to
// give a figure skips, with the figure (nil: no figure is checked).
func checkDashboard(t *testing.T, d dashboard, vm string, r dashRun, figures *testutil.Machine) {
	waitExported(t, vm, r)
	at := r.end().Add(time.Second)
	if at.Sub(r.Cells[0].Started) > rateInterval-5*time.Second {
		t.Fatalf("the run lasted %v: a rate over %v at its end does not cover it", at.Sub(r.Cells[0].Started), rateInterval)
	}
	checkCellVariable(t, d, vm, r)
	run := regexVar(r.id)
	var missed []string
	for _, p := range d.Panels {
		pc, ok := panelChecks[p.Title]
		if !ok {
			pc, ok = llmPanelChecks[p.Title]
		}
		if !ok {
			t.Errorf("panel %q: the test has no check of its figures", p.Title)
			continue
		}
		ss := panelSeries(t, vm, p, run, ".*", at)
		legends(t, p, ss)
		want := r.expected(t, pc)
		got := map[string][]panelSample{}
		for _, s := range ss {
			k := key(s.labels, pc.by)
			if _, ok := want[k]; !ok || s.labels["run"] != r.id {
				t.Errorf("panel %q: series %v = %g is of no cell of the run (%s)", p.Title, s.labels, s.v, k)
				continue
			}
			got[k] = append(got[k], s)
		}
		for k, f := range want {
			if len(got[k]) == 0 {
				t.Errorf("panel %q: no data of %s", p.Title, k)
			} else if msg := pc.check(f, got[k]); figures != nil && msg != "" {
				missed = append(missed, fmt.Sprintf("panel %q, %s: %s", p.Title, k, msg))
			}
		}
		one := r.Cells[len(r.Cells)-1].Name
		narrowed := panelSeries(t, vm, p, run, regexVar(one), at)
		if len(narrowed) == 0 && len(want) > 0 {
			t.Errorf("panel %q with Cell %s: no data", p.Title, one)
		}
		for _, s := range narrowed {
			if s.labels["cell"] != one {
				t.Errorf("panel %q with Cell %s: a series of %v", p.Title, one, s.labels)
			}
		}
	}
	if figures != nil {
		figures.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
	}
}

// waitExported waits until VictoriaMetrics shows every request of r and
// the series each workload sends at its end.
func waitExported(t *testing.T, vm string, r dashRun) {
	t.Helper()
	var want int64
	for _, w := range r.Workloads {
		want += w.RequestsTotal
	}
	sel := fmt.Sprintf(`perflab_requests_total{run=%q}`, r.id)
	unissued := fmt.Sprintf(`perflab_unissued_total{run=%q}[1h]`, r.id)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		got := lastSum(t, vm, sel)
		n := len(promQuery(t, vm, unissued, time.Time{}, time.Time{}, 0))
		if got == float64(want) && n == len(r.Workloads) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VictoriaMetrics shows %v requests and %d workloads' ends of %s, want %d and %d", got, n, r.id, want, len(r.Workloads))
		}
	}
}

// checkCellVariable checks the dashboard's Cell variable: a query of the
// cells of the runs picked, All (the default) matching every series, with
// a cell label or without one (a run without a plan has none).
func checkCellVariable(t *testing.T, d dashboard, vm string, r dashRun) {
	t.Helper()
	i := slices.IndexFunc(d.Templating.List, func(v dashVariable) bool { return v.Name == "cell" })
	if i < 0 {
		t.Errorf("the dashboard has no variable cell: %+v", d.Templating.List)
		return
	}
	v := d.Templating.List[i]
	args, ok := strings.CutPrefix(v.Definition, "label_values(")
	sel, label, ok2 := strings.Cut(strings.TrimSuffix(args, ")"), ", ")
	if v.Type != "query" || !v.Multi || !v.IncludeAll || v.AllValue != ".*" || !ok || !ok2 || label != "cell" {
		t.Errorf("variable cell: %+v, want a query of label_values(…, cell), several values, All .*", v)
		return
	}
	sel = strings.ReplaceAll(sel, "$run", regexVar(r.id))
	resp, err := http.Get(vm + "/api/v1/label/cell/values?" + url.Values{"match[]": {sel}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range r.Cells {
		want = append(want, c.Name)
	}
	slices.Sort(want)
	if !slices.Equal(out.Data, want) {
		t.Errorf("variable cell: %s offers %v, want the run's cells %v", sel, out.Data, want)
	}
}
