package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/view"
)

// notesRun is singleRun with what the other sections need: two gateway
// overheads, and driver facts and read-back checks (one lost) on its
// first workload.
func notesRun() *view.Run {
	r := singleRun()
	r.Overheads = overheads()
	r.Cells[0].Phases[0].Drivers = map[string]*view.DriverNotes{"low": {
		Facts: []driver.Fact{{Name: "rate (from the driver)", Value: "1.2 requests/s"}, {Name: "active series", Value: "36000"}},
		Checks: []driver.Check{
			{Name: "series", Expected: 36000, Found: 36000, Unit: "series", Note: "every acknowledged series was read back", State: driver.CheckLate,
				Late: 400, LateBy: 1500 * time.Millisecond},
			{Name: "exemplars", Expected: 10, Unit: "exemplars", Note: "none answered", State: driver.CheckUnverified,
				Reason: "HTTP 503: unavailable"},
			{Name: "samples", Expected: 432000, Found: 400000, Unit: "samples", Note: "32000 samples | missing", State: driver.CheckLost},
		},
	}}
	return r
}

// searchRun is a run of a capacity search: singleRun's phases with
// searchFixture's result.
func searchRun() *view.Run {
	r := singleRun()
	r.Search = searchFixture()
	return r
}

// parityFixtures are the runs whose Markdown and HTML reports are compared.
func parityFixtures(t *testing.T) map[string]*view.Run {
	return map[string]*view.Run{"plan": planRun(), "single": singleRun(), "slo": sloRun(t), "sizes": sizesRun(),
		"sidebyside": sideBySideRun(), "notes": notesRun(), "search": searchRun(), "llm": llmRun(), "repeat": repeatedRun(), "killed": killedRun()}
}

// TestHTMLHasEverySectionOfTheMarkdown renders each fixture as Markdown
// and as HTML and checks that every heading, table row, list item,
// paragraph and code block of the Markdown is in the page with the same
// text and figures (marks aside): a section or figure the page left out
// fails the test.
func TestHTMLHasEverySectionOfTheMarkdown(t *testing.T) {
	for name, r := range parityFixtures(t) {
		t.Run(name, func(t *testing.T) {
			var md, page bytes.Buffer
			if err := Markdown(&md, r); err != nil {
				t.Fatal(err)
			}
			r.Charts = []view.PhaseCharts{}
			if err := HTML(&page, r); err != nil {
				t.Fatal(err)
			}
			want := markdownUnits(md.String())
			have := htmlUnits(t, page.Bytes())
			if len(want) < 10 {
				t.Fatalf("only %d units in the Markdown", len(want))
			}
			for _, u := range want {
				if !have[u] {
					t.Errorf("the page lacks the Markdown's %s", u)
				}
			}
		})
	}
}

// A unit is one heading, table row, list item, paragraph or code block,
// as "kind: text" with the text normalised.
var (
	mdSep     = regexp.MustCompile(`^\|(-{3,}:?\|)+$`)
	mdOrdered = regexp.MustCompile(`^\d+\. `)
	spaces    = regexp.MustCompile(`\s+`)
)

// norm drops Markdown's marks and escapes and the page's layout of
// white space.
func norm(s string) string {
	s = strings.NewReplacer("**", "", "`", "", `\|`, "|").Replace(s)
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

func markdownUnits(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "" || mdSep.MatchString(l) || l == "| | |":
		case strings.HasPrefix(l, "```"):
			var code []string
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				code = append(code, lines[i])
			}
			out = append(out, "code: "+norm(strings.Join(code, "\n")))
		case strings.HasPrefix(l, "#"):
			out = append(out, "heading: "+norm(strings.TrimLeft(l, "# ")))
		case strings.HasPrefix(l, "| "):
			cells := regexp.MustCompile(`\s\|\s?`).Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), -1)
			for j, c := range cells {
				cells[j] = norm(c)
			}
			out = append(out, "row: "+strings.Join(cells, " ¦ "))
		case strings.HasPrefix(l, "- "):
			out = append(out, "item: "+norm(strings.TrimPrefix(l, "- ")))
		case mdOrdered.MatchString(l):
			out = append(out, "item: "+norm(mdOrdered.ReplaceAllString(l, "")))
		default:
			out = append(out, "text: "+norm(l))
		}
	}
	return out
}

// htmlUnits are the page's units: headings, table rows (th and td
// cells), list items, paragraphs (a paragraph may also stand for a list
// item, as the notes of the matrix do) and <pre> blocks.
func htmlUnits(t *testing.T, page []byte) map[string]bool {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "h1", "h2", "h3", "h4", "h5", "h6":
			out["heading: "+norm(textOf(n))] = true
		case "tr":
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode {
					cells = append(cells, norm(textOf(c)))
				}
			}
			out["row: "+strings.Join(cells, " ¦ ")] = true
		case "li", "p":
			out["item: "+norm(textOf(n))] = true
			out["text: "+norm(textOf(n))] = true
		case "pre":
			out["code: "+norm(textOf(n))] = true
		}
	})
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

// TestParityCatchesAMissingSection: the comparison sees a table, a list
// item and a heading the page does not have.
func TestParityCatchesAMissingSection(t *testing.T) {
	have := htmlUnits(t, []byte("<h2>Scaling</h2><table><tr><td>a</td><td>1 |2</td></tr></table><ul><li>x <code>y</code></li></ul>"))
	for u, in := range map[string]bool{"heading: Scaling": true, "row: a ¦ 1 |2": true, "item: x y": true,
		"heading: Suggested sizes": false, "row: a ¦ 1": false, "item: x": false} {
		if have[u] != in {
			t.Errorf("%q in the page: %v, want %v", u, have[u], in)
		}
	}
	if got := markdownUnits("\n## Size `s`\n\n| a | 1 \\|2 |\n|---|---:|\n- x `y`\n1. z.\n"); strings.Join(got, "\n") !=
		"heading: Size s\nrow: a ¦ 1 |2\nitem: x y\nitem: z." {
		t.Errorf("markdown units %q", got)
	}
}
