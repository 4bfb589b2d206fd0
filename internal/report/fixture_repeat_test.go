package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// repeatedRun is a plan without a matrix run with --repeat 3: prom (group
// prom) and vm (group vm) side by side under write-prom and write-vm in
// profile small, each repetition a cell of its own 60 s after the last,
// its window the 20 s after the first second, sampled every second:
//
//	CPU     prom 1.6, 1.7, 1.8 in repetitions 1, 2, 3; vm 0.9, 1.0, 1.1: the P99s' means 1.7 (1.6–1.8) and
//	        1.0 (0.9–1.1); vm / prom = 1.0 / 1.7 = 0.588: vm uses x1.7 less CPU, Fieller's interval from
//	        the three repetitions' means (each side's variance 0.01 / 3)
//	memory  prom 5 GiB, vm 1 GiB in every repetition: 0.2 with the interval a point: x5.0 less memory
//	sizes   from the 60 samples pooled: P99 = the 60th smallest, prom 1.8 cores × 1.25, vm 1.1 × 1.25
//	workloads 100 requests/s at 10 ms in every window (the fixture's workload)
func repeatedRun() *view.Run {
	r := &view.Run{Name: "prom-vs-vm", Started: t0, Ended: t0.Add(3 * sec(60)), State: "completed", Repeat: 3}
	comps := []analysis.Component{{Name: "prom", Group: "prom", Kind: "run"}, {Name: "vm", Group: "vm", Kind: "run"}}
	var reps []*view.Cell
	var runs []analysis.Repetition
	var cpuA, cpuB, memA, memB [][]float64
	for i := range 3 {
		start := t0.Add(sec(float64(60 * i)))
		win := analysis.Window{Start: start.Add(sec(1)), End: start.Add(sec(21)), Rule: "test: after the first interval"}
		series := map[string]map[string][]analysis.Point{
			"prom": {"cpu_cores": ticks(win.End, 20, constant(1.6+0.1*float64(i))), "rss_bytes": ticks(win.End, 20, constant(5*gib))},
			"vm":   {"cpu_cores": ticks(win.End, 20, constant(0.9+0.1*float64(i))), "rss_bytes": ticks(win.End, 20, constant(gib))},
		}
		name := fmt.Sprintf("repetition=%d", i+1)
		sums := []*analysis.Summary{workload(name+"/small/write-prom", "write-prom", "small", i, start, 21),
			workload(name+"/small/write-vm", "write-vm", "small", i, start, 21)}
		in := analysis.ResourceInput{Window: win, Components: comps, Series: series}
		p := &view.Phase{Profile: "small", State: "completed", Start: start, LoadEnd: win.End, Window: win, Workloads: sums,
			Resources: analysis.SummarizeResources(in)}
		reps = append(reps, &view.Cell{Index: i, Name: name, Vars: []view.Var{{Name: "repetition", Value: fmt.Sprint(i + 1)}}, Repetition: i + 1,
			State: "completed", Started: start, Ended: win.End, Components: comps, Phases: []*view.Phase{p}, Series: series})
		runs = append(runs, analysis.Repetition{State: "completed", Input: in, Summaries: sums})
		for _, x := range []struct {
			to   *[][]float64
			comp string
			res  string
		}{{&cpuA, "prom", analysis.CompareCPU}, {&cpuB, "vm", analysis.CompareCPU}, {&memA, "prom", analysis.CompareMemory}, {&memB, "vm", analysis.CompareMemory}} {
			*x.to = append(*x.to, analysis.ResourceSamples(series, win, []string{x.comp}, x.res))
		}
	}
	in, err := analysis.CellInsights([]analysis.PhaseData{analysis.PoolRepetitions("small", runs)}, analysis.DefaultInsightOptions())
	if err != nil {
		panic(err)
	}
	o := analysis.DefaultBootstrap()
	g := view.ComparisonGroup{Name: "Profile `small`", Comparisons: []analysis.Comparison{
		analysis.CompareResource("components", analysis.CompareCPU, cpuA, cpuB, o),
		analysis.CompareResource("components", analysis.CompareMemory, memA, memB, o)}}
	combo := &view.Cell{Name: "default", Repetitions: 3, Insights: in,
		SideBySide: []view.SideBySide{{A: "prom", B: "vm", Repetitions: 3, Groups: []view.ComparisonGroup{g}}}}
	r.Cells = reps
	r.Repeated = []*view.Repeated{{Cell: combo, Repetitions: reps, Profiles: view.RepeatedFigures(reps)}}
	for _, c := range reps {
		r.Workloads = append(r.Workloads, c.Phases[0].Workloads...)
	}
	return r
}

func TestGoldenRepeated(t *testing.T) {
	r := repeatedRun()
	md, _, term := goldenRun(t, "repeat", r)
	for _, want := range []string{
		"| Repetitions | 3: every cell ran 3 times, interleaved",
		"## Summary across repetitions",
		"| default | small | prom | – | – | 1.70 (1.60–1.80) | 5 GiB (5 GiB–5 GiB) |",
		"| default | small | vm | – | – | 1.00 (0.90–1.10) | 1 GiB (1 GiB–1 GiB) |",
		"| default | small | write-prom | POST /push | 100.0/s (100.0/s–100.0/s) |",
		"## Across 3 repetitions: `default`",
		"in each of 3 repetitions", "Fieller's 95 % interval", "the interval comes from the variation between the 3 repetitions",
		"vm uses x1.7 less CPU", "vm uses x5.0 less memory",
		"`sizes/default-small.yaml`",
		"## Cell `repetition=2`", "- Variables: repetition = `2`",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "## Matrix summary") || strings.Count(md.String(), "### Suggested sizes") != 1 {
		t.Errorf("a repeated run has one summary across repetitions and one set of sizes per combination, not one per repetition")
	}
	if !strings.Contains(term.String(), "side by side across the 3 repetitions of default, vm against prom:\n  profile small: CPU: vm uses x1.7 less CPU") {
		t.Errorf("terminal lacks the side-by-side line:\n%s", term.String())
	}
	var page bytes.Buffer
	r.Charts = []view.PhaseCharts{}
	if err := HTML(&page, r); err != nil || !strings.Contains(page.String(), `<h2 id="repeated">Summary across repetitions</h2>`) ||
		!strings.Contains(page.String(), `<td class="n">1.70 (1.60–1.80)</td>`) || !strings.Contains(page.String(), "<th>Repetitions</th>") ||
		!strings.Contains(page.String(), `<a href="#combination0">Across 3 repetitions: default</a>`) {
		t.Errorf("report.html lacks the summary across repetitions: %v", err)
	}
	files, err := SizeFiles(r)
	if err != nil || len(files) != 1 || files[0].Name != "sizes/default-small.yaml" ||
		!strings.Contains(string(files[0].Data), "cell default (the samples of its 3 repetitions, pooled)") {
		t.Errorf("size files %v: %+v", err, files)
	}
}
