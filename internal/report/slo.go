package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// sloCounts is how many gates passed, failed and had insufficient data.
func sloCounts(gates []view.Gate) (pass, fail, insufficient int) {
	for _, g := range gates {
		switch g.State {
		case analysis.GatePass:
			pass++
		case analysis.GateFail:
			fail++
		default:
			insufficient++
		}
	}
	return pass, fail, insufficient
}

// sloHeadline says in one line how the gates did: "all 3 gates pass",
// "1 of 3 gates passed, 1 failed, 1 had insufficient data".
func sloHeadline(gates []view.Gate) string {
	pass, fail, insufficient := sloCounts(gates)
	switch {
	case pass == len(gates) && pass == 1:
		return "the gate passes"
	case pass == len(gates):
		return fmt.Sprintf("all %d gates pass", pass)
	}
	parts := []string{fmt.Sprintf("%d of %d %s passed", pass, len(gates), sloPlural(len(gates), "gate"))}
	if fail > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", fail))
	}
	if insufficient > 0 {
		parts = append(parts, fmt.Sprintf("%d had insufficient data", insufficient))
	}
	return strings.Join(parts, ", ")
}

func sloPlural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// GateStateName is a verdict's state in summary.json: pass, fail or
// insufficient.
func GateStateName(s analysis.GateState) string {
	switch s {
	case analysis.GatePass:
		return "pass"
	case analysis.GateFail:
		return "fail"
	}
	return "insufficient"
}

// gateState is a verdict as reports print it.
func gateState(s analysis.GateState) string {
	switch s {
	case analysis.GatePass:
		return "pass"
	case analysis.GateFail:
		return "FAIL"
	}
	return "insufficient data"
}

func gateWorkload(g view.Gate) string {
	if g.Workload == "" {
		return "–"
	}
	return g.Workload
}

func gateMeasured(g view.Gate) string {
	if g.Measured == "" {
		return "–"
	}
	return g.Measured
}

// markdownSLO writes the SLO section: one row per gate and workload.
func markdownSLO(b *strings.Builder, r *view.Run) {
	if len(r.SLO) == 0 {
		return
	}
	heading(b, 2, "SLO gates")
	fmt.Fprintf(b, "Judged per workload over its steady-state window: %s.\n\n", sloHeadline(r.SLO))
	b.WriteString("| Gate | Workload | Measured | Verdict | From | Note |\n|---|---|---:|---|---|---|\n")
	for _, g := range r.SLO {
		verdict := gateState(g.State)
		if g.State != analysis.GatePass {
			verdict = "**" + verdict + "**"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s |\n", mdEscape(g.Expr), mdEscape(gateWorkload(g)),
			gateMeasured(g), verdict, mdEscape(g.Source), mdEscape(dash(g.Note)))
	}
}

// terminalSLO writes the gates after the summary table.
func terminalSLO(w io.Writer, r *view.Run) error {
	if len(r.SLO) == 0 {
		return nil
	}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 2, 4, 2, ' ', 0)
	for _, g := range r.SLO {
		note := ""
		if g.Note != "" {
			note = "(" + g.Note + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", gateState(g.State), g.Expr, gateWorkload(g), gateMeasured(g), note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSLO: %s\n", sloHeadline(r.SLO))
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
	return nil
}

type jsonSLO struct {
	Met   bool       `json:"met"`
	Gates []jsonGate `json:"gates"`
}

type jsonGate struct {
	Expr     string   `json:"expr"`
	Workload string   `json:"workload"`
	Source   string   `json:"source"`
	State    string   `json:"state"`
	Measured string   `json:"measured,omitempty"`
	Value    *float64 `json:"value"`
	Note     string   `json:"note,omitempty"`
}

// toJSONSLO is the summary's slo object; nil when the run has no gates.
func toJSONSLO(gates []view.Gate) *jsonSLO {
	if len(gates) == 0 {
		return nil
	}
	out := &jsonSLO{Met: view.SLOMet(gates), Gates: []jsonGate{}}
	for _, g := range gates {
		jg := jsonGate{Expr: g.Expr, Workload: g.Workload, Source: g.Source, State: GateStateName(g.State),
			Measured: g.Measured, Note: g.Note}
		if g.Measured != "" {
			v := round6(g.Value)
			jg.Value = &v
		}
		out.Gates = append(out.Gates, jg)
	}
	return out
}
