package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// comparedRuns is how many runs each side's figures come from.
func comparedRuns(c *view.RunComparison) (int, int) {
	na, nb := c.NA, c.NB
	if na == 0 {
		na = len(c.A)
	}
	if nb == 0 {
		nb = len(c.B)
	}
	return na, nb
}

// CompareMarkdown writes c as a Markdown report.
func CompareMarkdown(w io.Writer, c *view.RunComparison) error {
	b := &strings.Builder{}
	b.WriteString("# perflab compare\n\n")
	fmt.Fprintf(b, "- A: %s\n- B: %s\n", codeList(c.A), codeList(c.B))
	fmt.Fprintf(b, "- Method: %s\n", compareMethodOf(c))
	if c.Forced {
		b.WriteString("- **Compared with --force although the workloads differ:**\n")
		for _, d := range c.Differences {
			fmt.Fprintf(b, "  - %s\n", mdEscape(d))
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(b, "- Note: %s\n", mdEscape(n))
	}
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(b, "- Only in A, not compared: %s\n", codeList(c.OnlyA))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(b, "- Only in B, not compared: %s\n", codeList(c.OnlyB))
	}
	d := &doc{}
	for _, g := range c.Groups {
		d.heading(2, codeMarks(g.Name))
		comparisonTable(d, g.Comparisons, "A", "B")
	}
	d.markdown(b)
	_, err := io.WriteString(w, b.String())
	return err
}

func codeList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + mdEscape(s) + "`"
	}
	return strings.Join(out, ", ")
}

// compareMethodOf says how c's figures and intervals were made.
func compareMethodOf(c *view.RunComparison) string {
	na, nb := comparedRuns(c)
	m := compareMethod(na, nb)
	if na != len(c.A) || nb != len(c.B) {
		m += fmt.Sprintf("; every repetition of a repeated run (perflab run --repeat) counts as a run: %d on side A, %d on side B", na, nb)
	}
	return m
}

func compareMethod(na, nb int) string {
	if na == 1 && nb == 1 {
		return fmt.Sprintf("B / A of the means of each window's samples (resources every sample, rates every interval) and of the latency quantiles; "+
			"95 %% intervals by block bootstrap over time. With one run per side a difference under %.0f %% is shown as ~ "+
			"(the interval cannot see how much two runs of the same system differ); repeat the runs with --a/--b to support it", 100*analysis.MinRunEffect)
	}
	return fmt.Sprintf("B / A of the mean over %d and %d runs of each run's figure, with Fieller's 95 %% interval", na, nb)
}

// comparisonTable adds a table of a row per comparison and their
// warnings; the verdict names B as labelB ("B uses x1.7 less CPU").
func comparisonTable(d *doc, cs []analysis.Comparison, labelA, labelB string) {
	t := &table{Head: []string{"Subject", "Figure", labelA, labelB, labelB + " / " + labelA, "95 % CI", "Verdict"},
		Right: []bool{false, false, true, true, true, true, false}}
	var ws []string
	for _, c := range cs {
		r := c.Ratio
		ci := "–"
		if !math.IsNaN(r.Low) && !math.IsNaN(r.High) {
			ci = ratioText(r.Low) + "–" + ratioText(r.High)
		}
		t.Rows = append(t.Rows, []string{c.Subject, c.What, figureText(r.A, c.Unit), figureText(r.B, c.Unit),
			ratioText(r.Value), ci, verdictText(c, labelB)})
		for _, warn := range r.Warnings {
			ws = append(ws, fmt.Sprintf("%s %s: %s", c.Subject, c.What, warn))
		}
	}
	d.table(t)
	d.warnings(ws)
}

// verdictText is the comparison in the seeds' words: "B uses x1.7 less
// CPU", "B has x2.0 higher p99 latency", or "~".
func verdictText(c analysis.Comparison, label string) string {
	if c.Phrase == "~" {
		return "~"
	}
	verb := "has"
	if slices.Contains(analysis.CompareResources(), c.What) {
		verb = "uses"
	}
	return label + " " + verb + " " + c.Phrase
}

func ratioText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v >= 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func figureText(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch unit {
	case "cores":
		return cores(v)
	case "bytes":
		return sizeText(v)
	case "requests/s":
		return fmt.Sprintf("%.1f/s", v)
	case "fraction":
		return pct(v, 1)
	case "seconds":
		return dur(time.Duration(v * float64(time.Second)))
	case "": // a declared metric's plain number (observe.Number)
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// sideBySideSection is the side-by-side comparisons of a cell.
func sideBySideSection(d *doc, c *view.Cell, level int) {
	for i, s := range c.SideBySide {
		d.headingID(level, fmt.Sprintf("cell%d-side-by-side%d", c.Index, i), fmt.Sprintf("Side by side: %s against %s", code(s.B), code(s.A)))
		d.para(sideBySideMethod(s))
		var notes []item
		for _, n := range s.Notes {
			notes = append(notes, item{text: "Note: " + n})
		}
		d.list(notes...)
		if len(s.Groups) == 0 {
			d.para("Nothing to compare: neither side has samples or workloads in any profile of this cell.")
		}
		for _, g := range s.Groups {
			d.heading(level+1, codeMarks(g.Name))
			comparisonTable(d, g.Comparisons, s.A, s.B)
		}
	}
}

// The JSON of comparisons (perflab compare --format json, and
// summary.json's cells[].side_by_side).
type (
	jsonRunComparison struct {
		Format      string                `json:"format"`
		Version     int                   `json:"version"`
		A           []string              `json:"a"`
		B           []string              `json:"b"`
		Method      string                `json:"method"`
		Forced      bool                  `json:"forced"`
		Differences []string              `json:"differences"`
		Notes       []string              `json:"notes"`
		OnlyA       []string              `json:"only_a"`
		OnlyB       []string              `json:"only_b"`
		Groups      []jsonComparisonGroup `json:"groups"`
	}
	jsonSideBySide struct {
		A           string                `json:"a"`
		B           string                `json:"b"`
		Repetitions int                   `json:"repetitions,omitempty"`
		Notes       []string              `json:"notes"`
		Groups      []jsonComparisonGroup `json:"groups"`
	}
	jsonComparisonGroup struct {
		Name        string           `json:"name"`
		Comparisons []jsonComparison `json:"comparisons"`
	}
	jsonComparison struct {
		Subject      string   `json:"subject"`
		What         string   `json:"what"`
		Unit         string   `json:"unit"`
		A            *float64 `json:"a"`
		B            *float64 `json:"b"`
		NA           int      `json:"n_a"`
		NB           int      `json:"n_b"`
		Ratio        *float64 `json:"ratio"`
		Low          *float64 `json:"low"`
		High         *float64 `json:"high"`
		Significance string   `json:"significance"`
		Phrase       string   `json:"phrase"`
		Method       string   `json:"method"`
		Warnings     []string `json:"warnings"`
	}
)

// CompareJSONVersion is the version of perflab compare's JSON.
const CompareJSONVersion = 1

// CompareJSON writes c as JSON.
func CompareJSON(w io.Writer, c *view.RunComparison) error {
	out := jsonRunComparison{Format: "perflab-compare", Version: CompareJSONVersion, A: c.A, B: c.B,
		Method: compareMethodOf(c), Forced: c.Forced, Differences: nonNil(c.Differences),
		Notes: nonNil(c.Notes), OnlyA: nonNil(c.OnlyA), OnlyB: nonNil(c.OnlyB), Groups: toJSONGroups(c.Groups)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(ss []string) []string { return append([]string{}, ss...) }

func toJSONGroups(gs []view.ComparisonGroup) []jsonComparisonGroup {
	out := []jsonComparisonGroup{}
	for _, g := range gs {
		jg := jsonComparisonGroup{Name: g.Name, Comparisons: []jsonComparison{}}
		for _, c := range g.Comparisons {
			r := c.Ratio
			jg.Comparisons = append(jg.Comparisons, jsonComparison{Subject: c.Subject, What: c.What, Unit: c.Unit,
				A: optFloat(r.A), B: optFloat(r.B), NA: r.NA, NB: r.NB, Ratio: optFloat(r.Value), Low: optFloat(r.Low),
				High: optFloat(r.High), Significance: r.Significance.String(), Phrase: c.Phrase, Method: r.Method,
				Warnings: nonNil(r.Warnings)})
		}
		out = append(out, jg)
	}
	return out
}

func toJSONSideBySide(ss []view.SideBySide) []jsonSideBySide {
	var out []jsonSideBySide
	for _, s := range ss {
		out = append(out, jsonSideBySide{A: s.A, B: s.B, Repetitions: s.Repetitions, Notes: nonNil(s.Notes), Groups: toJSONGroups(s.Groups)})
	}
	return out
}
