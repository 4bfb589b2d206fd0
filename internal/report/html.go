package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

//go:embed html.tmpl
var htmlText string

// htmlTemplate is the page: html/template escapes every figure and name;
// tables and docs escape their own (table.html, doc.html).
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"table": func(t *table) template.HTML {
		var b strings.Builder
		t.html(&b)
		return template.HTML(b.String())
	},
}).Parse(htmlText))

// htmlPage is what the template renders.
type htmlPage struct {
	Title       string
	Facts       [][2]string
	Nav         []htmlLink
	SLOHeadline string
	SLO         *table
	Search      template.HTML // the capacity search or sweep, when the run is one
	Pareto      template.HTML // a sweep's total against per-user output tokens/s (paretoChart)
	SearchTitle string        // "Capacity search" or "Sweep"
	Matrix      *table
	MatrixNotes []string
	Overhead    template.HTML // the Gateway overhead section
	Cells       []htmlCell
	// Repeated is a repeated run's summary across repetitions and each
	// combination's sections, in place of Matrix; RepeatedLinks are their
	// anchors.
	Repeated      template.HTML
	RepeatedLinks []htmlLink
}

// htmlLink is an entry of the page's table of contents.
type htmlLink struct{ ID, Text string }

type htmlCell struct {
	Heading    string
	Facts      []template.HTML
	Components *table
	Warnings   []string // components killed when the cell ended
	Phases     []htmlPhase
	Summary    template.HTML // the sections after the phases: sizes, scaling, observations, side by side
	Links      []htmlLink    // the anchors of Summary
}

type htmlPhase struct {
	ID        string
	Heading   string
	Facts     []string
	Charts    []htmlChart
	Workloads []htmlWorkload
	Workers   template.HTML
	Resources *htmlResources
}

type htmlChart struct {
	ID, Title string
	SVG       template.HTML // drawn by svgchart.go, which escapes its text
}

type htmlWorkload struct {
	Heading  string
	Facts    []string
	Warnings []string
	Tables   []*table
	NoErrors bool
	Driver   template.HTML // the driver's facts and read-back checks
}

type htmlResources struct {
	Heading  string
	Warnings []string
	Empty    bool
	Tables   []*table
}

// HTML writes r as a self-contained HTML page: every section of the
// Markdown report and every chart (Charts) inline as SVG. It needs nothing
// from the network to be viewed: no scripts, no fonts, no style sheets but
// its own.
func HTML(w io.Writer, r *view.Run) error {
	charts := r.Charts
	if charts == nil {
		charts = Charts(r)
	}
	return htmlTemplate.Execute(w, htmlPageOf(r, charts))
}

func htmlPageOf(r *view.Run, charts []view.PhaseCharts) htmlPage {
	pg := htmlPage{Title: "perflab run " + r.Name}
	pg.Facts = append(pg.Facts, [2]string{"Started", r.Started.UTC().Format("2006-01-02 15:04:05 UTC")})
	if !r.Ended.IsZero() {
		pg.Facts = append(pg.Facts, [2]string{"Duration", r.Ended.Sub(r.Started).Round(100 * time.Millisecond).String()})
	}
	pg.Facts = append(pg.Facts, [2]string{"State", stateText(r)})
	if r.Repeat > 1 {
		pg.Facts = append(pg.Facts, [2]string{"Repetitions", repeatText(r.Repeat)})
	}
	if r.Command != "" {
		pg.Facts = append(pg.Facts, [2]string{"Command", r.Command})
	}
	if r.Tool != "" {
		pg.Facts = append(pg.Facts, [2]string{"Generator", r.Tool + " on " + r.Host})
	}
	for _, line := range r.Exports {
		pg.Facts = append(pg.Facts, [2]string{"Live export", line})
	}
	if len(r.SLO) > 0 {
		pg.SLOHeadline = sloHeadline(r.SLO)
		pg.SLO = htmlSLO(r.SLO)
	}
	if r.Search != nil {
		d := &doc{}
		searchSection(d, r.Search, 2)
		pg.Search, pg.SearchTitle = docHTML(d), searchTitle(r.Search)
		if svg := paretoChart(r.Search); svg != nil {
			pg.Pareto = template.HTML(inlineSVG(view.Chart{SVG: svg})) // drawn by svgchart.go, which escapes its text
		}
	} else if svg := profileParetoChart(r); svg != nil {
		pg.Pareto = template.HTML(inlineSVG(view.Chart{SVG: svg})) // drawn by svgchart.go, which escapes its text
	}
	matrix := isMatrix(r)
	if matrix {
		pg.Matrix, pg.MatrixNotes = htmlMatrix(r)
	}
	if len(r.Overheads) > 0 {
		d := &doc{}
		overheadSection(d, r.Overheads)
		pg.Overhead = docHTML(d)
	}
	if len(r.Repeated) > 0 { // the summary across repetitions and each combination's sections take the matrix's place
		d, links := repeatedDoc(r)
		pg.Matrix, pg.Repeated, pg.RepeatedLinks = nil, docHTML(d), links
	}
	byPhase := map[*view.Phase]view.PhaseCharts{}
	for _, pc := range charts {
		byPhase[pc.Phase] = pc
	}
	for ci, c := range r.AllCells() {
		pg.Cells = append(pg.Cells, htmlCellOf(ci, c, matrix, byPhase))
	}
	pg.Nav = htmlNav(pg)
	return pg
}

// htmlNav is the table of contents: the sections of the run, every
// phase, and the headings after each cell's phases.
func htmlNav(pg htmlPage) []htmlLink {
	var nav []htmlLink
	for _, s := range []struct {
		on       bool
		id, text string
	}{{pg.SLO != nil, "slo", "SLO gates"}, {pg.Search != "", "search", pg.SearchTitle},
		{pg.Matrix != nil, "matrix", "Matrix summary"}, {pg.Overhead != "", "gateway-overhead", "Gateway overhead"}} {
		if s.on {
			nav = append(nav, htmlLink{s.id, s.text})
		}
	}
	nav = append(nav, pg.RepeatedLinks...)
	matrix := pg.Matrix != nil || pg.Repeated != ""
	for _, c := range pg.Cells {
		links := []htmlLink{}
		for _, p := range c.Phases {
			links = append(links, htmlLink{p.ID, p.Heading})
		}
		for _, l := range append(links, c.Links...) {
			if matrix {
				l.Text += " — " + c.Heading
			}
			nav = append(nav, l)
		}
	}
	return nav
}

// docHTML renders d for the page.
func docHTML(d *doc) template.HTML {
	var b strings.Builder
	d.html(&b)
	return template.HTML(b.String())
}

func htmlSLO(gates []view.Gate) *table {
	t := &table{Head: []string{"Gate", "Workload", "Measured", "Verdict", "From", "Note"},
		Right: []bool{false, false, true, false, false, false}}
	for _, g := range gates {
		t.Rows = append(t.Rows, []string{g.Expr, gateWorkload(g), gateMeasured(g), gateState(g.State), g.Source, dash(g.Note)})
		t.Fail = append(t.Fail, g.State != analysis.GatePass)
	}
	return t
}

// htmlMatrix is the matrix summary and its notes, without Markdown's
// code spans.
func htmlMatrix(r *view.Run) (*table, []string) {
	var notes []string
	for _, n := range matrixNotes(r) {
		notes = append(notes, strings.ReplaceAll(n, "`", ""))
	}
	return matrixTable(r), notes
}

func htmlCellOf(ci int, c *view.Cell, matrix bool, charts map[*view.Phase]view.PhaseCharts) htmlCell {
	hc := htmlCell{}
	if matrix {
		hc.Heading = "Cell " + cellLabel(c)
		for _, f := range cellFacts(c) {
			hc.Facts = append(hc.Facts, template.HTML(markedHTML(f)))
		}
	}
	hc.Components = componentsTable(c, false)
	for _, w := range killedWarnings(c) {
		hc.Warnings = append(hc.Warnings, strings.ReplaceAll(w, "`", ""))
	}
	for pi, p := range c.Phases {
		hc.Phases = append(hc.Phases, htmlPhaseOf(fmt.Sprintf("cell%d-phase%d", ci, pi), p, charts[p]))
	}
	level := 2
	if matrix {
		level = 3
	}
	if d := cellSummary(c, level, true); len(d.blocks) > 0 {
		hc.Summary, hc.Links = docHTML(d), d.anchors()
	}
	return hc
}

func htmlPhaseOf(id string, p *view.Phase, pc view.PhaseCharts) htmlPhase {
	hp := htmlPhase{ID: id, Heading: "Profile " + p.Profile}
	if p.Implicit {
		hp.Heading = "Workload"
		if len(p.Workloads) > 0 {
			hp.Heading += " " + p.Workloads[0].Workload.DisplayName()
		}
	} else {
		hp.Facts = phaseFacts(p)
	}
	for _, c := range pc.Charts {
		hp.Charts = append(hp.Charts, htmlChart{ID: c.ID, Title: c.Title, SVG: template.HTML(inlineSVG(c))})
	}
	for _, s := range p.Workloads {
		hw := htmlWorkloadOf(s, p.Implicit)
		d := &doc{}
		driverSection(d, p.Drivers[s.Workload.Name], 5)
		if len(d.blocks) > 0 {
			hw.Driver = docHTML(d)
		}
		hp.Workloads = append(hp.Workloads, hw)
	}
	if len(p.Workers) > 0 {
		d := &doc{}
		workersSection(d, p, 4)
		hp.Workers = docHTML(d)
	}
	hp.Resources = htmlResourcesOf(p.Resources)
	if t := servingTable(p.Resources, p.Workloads); t != nil && hp.Resources != nil {
		hp.Resources.Tables = append([]*table{t}, hp.Resources.Tables...)
	}
	return hp
}

func htmlWorkloadOf(s *analysis.Summary, implicit bool) htmlWorkload {
	w := s.Workload
	hw := htmlWorkload{Warnings: s.Warnings}
	if !implicit {
		hw.Heading = "Workload " + w.DisplayName()
	}
	hw.Facts = workloadFacts(s, w.Target)
	hw.Tables = append(hw.Tables, throughputTable(s), latencyTable(s))
	for _, t := range []*table{tokensTable(s), lengthsTable(s), goodputTable(s)} {
		if t != nil {
			hw.Tables = append(hw.Tables, t)
		}
	}
	if t := errorsTable(s); t != nil {
		hw.Tables = append(hw.Tables, t)
	} else {
		hw.NoErrors = true
	}
	return hw
}
