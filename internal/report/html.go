package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

//go:embed html.tmpl
var htmlText string

// htmlTemplate is the page: html/template escapes every figure and name.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"on": func(flags []bool, i int) bool { return i < len(flags) && flags[i] },
}).Parse(htmlText))

// htmlPage is what the template renders.
type htmlPage struct {
	Title       string
	Facts       [][2]string
	SLOHeadline string
	SLO         *htmlTable
	Matrix      *htmlTable
	MatrixNotes []string
	Cells       []htmlCell
}

// htmlTable is a table of text cells; Right marks the columns of figures.
type htmlTable struct {
	Title string
	Head  []string
	Right []bool
	Rows  [][]string
	Fail  []bool // rows to mark as failed
	Note  string
}

type htmlCell struct {
	Heading    string
	Facts      []string
	Components *htmlTable
	Phases     []htmlPhase
}

type htmlPhase struct {
	ID        string
	Heading   string
	Facts     []string
	Charts    []htmlChart
	Workloads []htmlWorkload
	Resources *htmlResources
}

type htmlChart struct {
	ID, Title string
	SVG       template.HTML // drawn by gonum/plot; its text is escaped there
}

type htmlWorkload struct {
	Heading  string
	Facts    []string
	Warnings []string
	Tables   []*htmlTable
	NoErrors bool
}

type htmlResources struct {
	Heading  string
	Warnings []string
	Empty    bool
	Tables   []*htmlTable
}

// HTML writes r as a self-contained HTML page: the tables of the Markdown
// report and every chart (Charts) inline as SVG. It needs nothing from the
// network to be viewed: no scripts, no fonts, no style sheets but its own.
func HTML(w io.Writer, r *Run) error {
	charts := r.Charts
	if charts == nil {
		var err error
		if charts, err = Charts(r); err != nil {
			return err
		}
	}
	return htmlTemplate.Execute(w, htmlPageOf(r, charts))
}

func htmlPageOf(r *Run, charts []PhaseCharts) htmlPage {
	pg := htmlPage{Title: "perflab run " + r.Name}
	pg.Facts = append(pg.Facts, [2]string{"Started", r.Started.UTC().Format("2006-01-02 15:04:05 UTC")})
	if !r.Ended.IsZero() {
		pg.Facts = append(pg.Facts, [2]string{"Duration", r.Ended.Sub(r.Started).Round(100 * time.Millisecond).String()})
	}
	pg.Facts = append(pg.Facts, [2]string{"State", stateText(r)})
	if r.Command != "" {
		pg.Facts = append(pg.Facts, [2]string{"Command", r.Command})
	}
	if r.Tool != "" {
		pg.Facts = append(pg.Facts, [2]string{"Generator", r.Tool + " on " + r.Host})
	}
	if len(r.SLO) > 0 {
		pg.SLOHeadline = sloHeadline(r.SLO)
		pg.SLO = htmlSLO(r.SLO)
	}
	matrix := r.isMatrix()
	if matrix {
		pg.Matrix, pg.MatrixNotes = htmlMatrix(r)
	}
	byPhase := map[*Phase]PhaseCharts{}
	for _, pc := range charts {
		byPhase[pc.Phase] = pc
	}
	for ci, c := range r.cells() {
		pg.Cells = append(pg.Cells, htmlCellOf(ci, c, matrix, byPhase))
	}
	return pg
}

func htmlSLO(gates []Gate) *htmlTable {
	t := &htmlTable{Head: []string{"Gate", "Workload", "Measured", "Verdict", "From", "Note"},
		Right: []bool{false, false, true, false, false, false}}
	for _, g := range gates {
		t.Rows = append(t.Rows, []string{g.Expr, gateWorkload(g), gateMeasured(g), gateState(g.State), g.Source, dash(g.Note)})
		t.Fail = append(t.Fail, g.State != analysis.GatePass)
	}
	return t
}

func htmlMatrix(r *Run) (*htmlTable, []string) {
	names := varNames(r.cells())
	t := &htmlTable{Head: append(append([]string{}, names...), "Profile", "Component", "Heap avg", "GC/min", "CPU P99 (cores)", "Memory P99"),
		Note: "Each phase's figures over its steady-state window: Go heap in use (average), GC cycles per minute (average), CPU and memory P99."}
	t.Right = make([]bool, len(t.Head))
	for i := len(names) + 2; i < len(t.Head); i++ {
		t.Right[i] = true
	}
	for _, c := range r.cells() {
		vars := cellVarValues(c, names)
		for _, p := range c.Phases {
			for _, row := range matrixRows(p) {
				t.Rows = append(t.Rows, append(append(append([]string{}, vars...), p.Profile), strings.Split(row, " | ")...))
			}
		}
		if len(c.Phases) == 0 {
			t.Rows = append(t.Rows, append(append([]string{}, vars...), "–", "–", "–", "–", "–", "–"))
		}
	}
	var b strings.Builder
	markdownMatrixNotes(&b, r)
	var notes []string
	for _, l := range strings.Split(b.String(), "\n") {
		if n, ok := strings.CutPrefix(l, "- **Note:** "); ok {
			notes = append(notes, strings.ReplaceAll(n, "`", ""))
		}
	}
	return t, notes
}

func htmlCellOf(ci int, c *Cell, matrix bool, charts map[*Phase]PhaseCharts) htmlCell {
	hc := htmlCell{}
	if matrix {
		hc.Heading = "Cell " + cellLabel(c)
		var vs []string
		for _, v := range c.Vars {
			vs = append(vs, v.Name+" = "+v.Value)
		}
		if len(vs) > 0 {
			hc.Facts = append(hc.Facts, "Variables: "+strings.Join(vs, ", "))
		}
		hc.Facts = append(hc.Facts, "State: "+cellStateText(c))
	}
	hc.Components = htmlComponents(c)
	for pi, p := range c.Phases {
		hc.Phases = append(hc.Phases, htmlPhaseOf(fmt.Sprintf("cell%d-phase%d", ci, pi), p, charts[p]))
	}
	return hc
}

func htmlComponents(c *Cell) *htmlTable {
	if len(c.Components) == 0 {
		return nil
	}
	t := &htmlTable{Title: "Components", Head: []string{"Component", "Group", "Kind", "PID", "Metrics", "Data directories", "Exited during the run"},
		Right: []bool{false, false, false, true}}
	for _, comp := range c.Components {
		exited := "no"
		if !comp.Exited.IsZero() {
			exited = fmt.Sprintf("%s UTC: %s", clock(comp.Exited), exitText(comp.ExitText))
		}
		t.Rows = append(t.Rows, []string{comp.Name, dash(comp.Group), comp.Kind, pidText(comp.PID), dash(comp.MetricsURL),
			dash(strings.Join(comp.DataDirs, ", ")), exited})
	}
	return t
}

func htmlPhaseOf(id string, p *Phase, pc PhaseCharts) htmlPhase {
	hp := htmlPhase{ID: id, Heading: "Profile " + p.Profile}
	if p.Implicit {
		hp.Heading = "Workload"
		if len(p.Workloads) > 0 {
			hp.Heading += " " + p.Workloads[0].Workload.DisplayName()
		}
	} else {
		if p.State != "" && p.State != "completed" {
			hp.Facts = append(hp.Facts, "State: "+phaseStateText(p))
		}
		if p.Warmup > 0 {
			hp.Facts = append(hp.Facts, "Warm-up: "+p.Warmup.String())
		}
		if !p.Window.Start.IsZero() {
			hp.Facts = append(hp.Facts, fmt.Sprintf("Steady-state window: %s–%s UTC (rule: %s)", clock(p.Window.Start), clock(p.Window.End), p.Window.Rule))
		}
	}
	for _, c := range pc.Charts {
		hp.Charts = append(hp.Charts, htmlChart{ID: c.ID, Title: c.Title, SVG: template.HTML(c.InlineSVG())})
	}
	for _, s := range p.Workloads {
		hp.Workloads = append(hp.Workloads, htmlWorkloadOf(s, p.Implicit))
	}
	hp.Resources = htmlResourcesOf(p.Resources)
	return hp
}

func htmlWorkloadOf(s *analysis.Summary, implicit bool) htmlWorkload {
	w := s.Workload
	hw := htmlWorkload{Warnings: s.Warnings}
	if !implicit {
		hw.Heading = "Workload " + w.DisplayName()
	}
	hw.Facts = []string{
		fmt.Sprintf("Driver: %s → %s", w.Driver, w.Target),
		"Load model: " + modelText(w),
		fmt.Sprintf("Steady-state window: %s → %s (%.1f s, %d intervals; rule: %s)",
			offset(w.Start, s.Window.Start), offset(w.Start, s.Window.End), s.Seconds, s.Intervals, s.Window.Rule),
		fmt.Sprintf("Requests in window: %d (%.1f/s); whole run: %d, of which %d failed", s.Requests, s.Rate, s.RequestsTotal, s.ErrorsTotal),
	}
	if w.Model == "open" {
		hw.Facts = append(hw.Facts,
			fmt.Sprintf("Dropped arrivals: %d in window, %d in the whole run (%s of %d scheduled)",
				s.Dropped, s.DroppedTotal, pct(float64(s.DroppedTotal), float64(w.Scheduled)), w.Scheduled),
			fmt.Sprintf("Scheduler lag (dispatch − intended start): p50 %s, p99 %s, max %s", dur(s.Lag.P50), dur(s.Lag.P99), dur(s.Lag.Max)))
	}
	hw.Tables = append(hw.Tables, htmlThroughput(s), htmlLatency(s))
	if t := htmlErrors(s); t != nil {
		hw.Tables = append(hw.Tables, t)
	} else {
		hw.NoErrors = true
	}
	return hw
}

func htmlThroughput(s *analysis.Summary) *htmlTable {
	t := &htmlTable{Title: "Throughput", Head: []string{"Operation", "Requests", "Rate", "Target", "Success", "Received/s", "Sent/s"},
		Right: []bool{false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		t.Rows = append(t.Rows, []string{op.Name, fmt.Sprint(op.Requests), fmt.Sprintf("%.1f/s", op.Rate), targetText(s.Workload, s, op),
			pct(float64(op.OK), float64(op.Requests)), bytesPS(op.BytesRecvPS), bytesPS(op.BytesSentPS)})
	}
	return t
}

func htmlLatency(s *analysis.Summary) *htmlTable {
	t := &htmlTable{Title: "Latency", Head: []string{"Operation", "Measure", "p50", "p90", "p99", "p99.9", "max", "mean"},
		Right: []bool{false, false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		for _, m := range []struct {
			what string
			q    analysis.Quantiles
		}{{"latency (from intended start)", op.Latency}, {"service time (from actual start)", op.Service},
			{"time to first byte", op.TTFB}, {"connect (new connections)", op.Connect}} {
			if m.q.Count > 0 {
				t.Rows = append(t.Rows, []string{op.Name, m.what, dur(m.q.P50), dur(m.q.P90), dur(m.q.P99), dur(m.q.P999), dur(m.q.Max), dur(m.q.Mean)})
			}
		}
	}
	return t
}

func htmlErrors(s *analysis.Summary) *htmlTable {
	t := &htmlTable{Title: "Errors in the window", Head: []string{"Operation", "Class", "Count", "Share", "Sample"},
		Right: []bool{false, false, true, true, false}}
	for _, op := range s.Ops {
		for _, e := range op.Errors {
			t.Rows = append(t.Rows, []string{op.Name, e.Class, fmt.Sprint(e.Count), pct(float64(e.Count), float64(op.Requests)), e.Sample})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}
