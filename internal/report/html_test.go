package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"

	"golang.org/x/net/html"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// chartRun is singleRun with what charts need: each workload's intervals
// (100 operations a second at 10 ms, one failing every other second, 2
// dropped in the third) and the components' samples over the whole run.
// The workload "low" is renamed to test escaping.
func chartRun() *view.Run {
	r := singleRun()
	r.Timelines = map[string][]analysis.IntervalFigures{}
	for _, s := range r.Workloads {
		var ivs []*stats.Interval
		for i := 0; s.Workload.Start.Add(sec(float64(i+1))).Compare(s.Workload.LoadEnd) <= 0; i++ {
			st := stats.NewOpStats()
			for range 100 {
				st.Latency.Record(10 * time.Millisecond)
			}
			st.Classes[stats.OK], st.Classes[stats.Status5xx] = 100-int64(i%2), int64(i%2)
			iv := &stats.Interval{Index: i, Start: s.Workload.Start.Add(sec(float64(i))), End: s.Workload.Start.Add(sec(float64(i + 1))),
				Ops: map[string]*stats.OpStats{"POST /push": st}}
			if i == 2 {
				iv.Dropped = 2
			}
			ivs = append(ivs, iv)
		}
		r.Timelines[s.Workload.Name] = analysis.Timeline(ivs)
	}
	end := t0.Add(30 * time.Second)
	r.Cells[0].Series = map[string]map[string][]analysis.Point{
		"target":  {"rss_bytes": ticks(end, 30, func(i int) float64 { return float64(100+i) * mib }), "cpu_cores": ticks(end, 30, func(i int) float64 { return 0.05 * float64(i) })},
		"perflab": {"rss_bytes": ticks(end, 30, constant(40*mib)), "cpu_cores": ticks(end, 30, constant(0.3))},
	}
	r.Workloads[0].Workload.Short = "<low & \"quoted\">"
	return r
}

// wantTitles are the chart titles of chartRun, phase by phase.
var wantTitles = []string{
	"Throughput — workload <low & \"quoted\">", "Latency p50, p90, p99 per interval — workload <low & \"quoted\">",
	"Errors and dropped arrivals — workload <low & \"quoted\">", "CPU by component — workload <low & \"quoted\">",
	"Memory by component — workload <low & \"quoted\">", "Latency spectrum over the steady-state window — workload <low & \"quoted\">",
	"Throughput — workload high", "Latency p50, p90, p99 per interval — workload high", "Errors and dropped arrivals — workload high",
	"CPU by component — workload high", "Memory by component — workload high", "Latency spectrum over the steady-state window — workload high",
}

// TestHTMLStructure parses the page: every chart is an inline <svg> with
// its <title>, names are escaped, and nothing is loaded from elsewhere.
func TestHTMLStructure(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, chartRun()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	var tables int
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed":
			t.Errorf("the page has a <%s> element", n.Data)
		case "table":
			tables++
		case "svg":
			if n.Parent.Data != "figure" {
				t.Errorf("an <svg> outside a <figure>")
			}
			if c := firstElement(n); c == nil || c.Data != "title" || c.FirstChild == nil {
				t.Errorf("an <svg> without a <title> first")
			} else {
				titles = append(titles, c.FirstChild.Data)
			}
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q> refers outside the page", n.Data, a.Key, a.Val)
			}
		}
	})
	if strings.Join(titles, "\n") != strings.Join(wantTitles, "\n") {
		t.Errorf("chart titles:\n%s\nwant:\n%s", strings.Join(titles, "\n"), strings.Join(wantTitles, "\n"))
	}
	// The run's facts, the components, and per workload throughput and
	// latency (no errors in its window) and memory and CPU.
	if tables != 1+1+2*4 {
		t.Errorf("%d tables", tables)
	}
	if strings.Contains(b.String(), "<low &") || !strings.Contains(b.String(), "&lt;low &amp; &#34;quoted&#34;&gt;") {
		t.Errorf("the workload name is not escaped")
	}
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// TestGoldenHTML checks the page's sections and layout against a golden
// file, without the charts (TestChartGeometry and others check those): a matrix, SLO
// gates, suggested sizes with scaling and observations, a side-by-side
// comparison, gateway overheads with driver notes, and a capacity search.
func TestGoldenHTML(t *testing.T) {
	for name, r := range map[string]*view.Run{"plan": planRun(), "slo": sloRun(t), "sizes": sizesRun(), "sidebyside": sideBySideRun(),
		"notes": notesRun(), "search": searchRun(), "llm": llmRun(), "repeat": repeatedRun()} {
		r.Charts = []view.PhaseCharts{}
		var b bytes.Buffer
		if err := HTML(&b, r); err != nil {
			t.Fatal(err)
		}
		golden(t, name+".html", b.Bytes())
	}
}

// TestHTMLSections checks the figures of the sections that sizing,
// comparisons, gateways, drivers and searches add, as the page writes
// them: the YAML of a size in a <pre>, the totals, a LOST check marked as
// failed, the overhead's headline, the verdicts; and the table of
// contents links them.
func TestHTMLSections(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    *view.Run
		want []string
	}{
		{"sizes", sizesRun(), []string{
			`<li><a href="#cell0-sizes">Suggested sizes</a></li>`,
			`<h2 id="cell0-sizes">Suggested sizes</h2>`,
			"<p>Strategy <code>p99</code>: requests = P99 × (1 + headroom)",
			`<tr><td>pico</td><td></td><td><strong>total</strong></td><td class="n">3936Mi</td><td class="n">6048Mi</td><td class="n">700m</td><td class="n">1.06</td></tr>`,
			"<h3>Size <code>pico</code> — push 100/s (400 KiB/s sent), query 25/s</h3>\n<pre><code class=\"language-yaml\">ingester:\n  resources:\n    requests:\n      cpu: 380m\n      memory: 2Gi\n    limits:\n      cpu: 570m\n      memory: 3Gi\n",
			"<p>Total resources: requests 3.84 GiB memory, 0.70 cores; limits 5.91 GiB memory, 1.06 cores. The run directory holds this size as <code>sizes/default-pico.yaml</code>.</p>",
			`<tr><td>ingester</td><td>CPU</td><td class="n">3</td><td class="n">0.1 cores</td><td class="n">0.2 cores</td><td class="n">1.00</td><td>linear</td></tr>`,
			"<ol><li>ingester accounts for 52–69 % of memory across 3 profiles",
			`<tr><td>pico</td><td class="n">2.86 GiB</td><td class="n">2.86 GiB</td><td class="n">2.59 GiB</td><td class="n">0.55 cores</td>`,
		}},
		{"side by side", sideBySideRun(), []string{
			`<h2 id="cell0-side-by-side0">Side by side: <code>vm</code> against <code>prom</code></h2>`,
			"<h3>Profile <code>small</code></h3>",
			`<td>vm uses x1.7 less CPU</td>`, `<td>vm uses x4.9 less memory</td>`, `<td>vm has x2.0 lower p50 latency</td>`,
			"<ul><li>Note: the workloads&#39; param headers differ</li></ul>",
		}},
		{"notes", notesRun(), []string{
			`<li><a href="#gateway-overhead">Gateway overhead</a></li>`,
			"<h3>Workload <code>chat</code>, profile <code>p</code>, gateway <code>gw</code></h3>",
			`<td>p50 latency</td><td class="n">5.10 ms</td><td class="n">7.20 ms</td><td class="n">+2.10 ms (95 % CI +2.05 ms to +2.16 ms)</td>`,
			"<p><strong>Gateway overhead at p50: +2.10 ms (95 % CI +2.05 ms to +2.16 ms)</strong></p>",
			`<li class="warning">Warning: 9 intervals in the window (3 batches)`,
			"<h5>Driver facts</h5>\n<ul><li>rate (from the driver): 1.2 requests/s</li><li>active series: 36000</li></ul>",
			`<tr class="fail"><td>samples</td><td class="n">432000 samples</td><td class="n">400000 samples</td><td><strong>LOST</strong> 32000 samples</td><td>32000 samples | missing</td></tr>`,
		}},
		{"search", searchRun(), []string{
			`<li><a href="#search">Capacity search</a></li>`,
			`<h2 id="search">Capacity search <code>cap</code></h2>`,
			"<tr><th>Result</th><td>highest sustainable rate <strong>300/s</strong> (400/s did not pass",
			`<tr class="fail"><td class="n">3</td><td class="n">400/s</td><td class="n">398.0/s</td><td class="n">300.0 ms</td><td class="n">900.0 ms</td>`,
			`<td class="n">4 (bisect)</td>`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Charts = []view.PhaseCharts{}
			var b bytes.Buffer
			if err := HTML(&b, tt.r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("the page lacks %q", w)
				}
			}
		})
	}
}

// TestHTMLNeedsNoNetwork: the page, charts inline, names no address but
// the run's own (its workloads' targets, its components' metrics
// endpoints): no "://" or "url(" anywhere else, no @import or @font-face,
// no font embedded in a chart; the charts' text asks for Liberation Sans
// with fallbacks of the same metrics, which every viewer has.
func TestHTMLNeedsNoNetwork(t *testing.T) {
	r := chartRun()
	r.Cells[0].Components[0].MetricsURL = "http://127.0.0.1:9100/metrics"
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg"); n != len(wantTitles) {
		t.Fatalf("%d charts in the page", n)
	}
	rest, own := page, runURLs(r)
	if len(own) != 2 {
		t.Fatalf("the run's addresses: %q", own)
	}
	for _, u := range own {
		if !strings.Contains(rest, template.HTMLEscapeString(u)) {
			t.Errorf("the page does not show %s", u)
		}
		rest = strings.ReplaceAll(rest, template.HTMLEscapeString(u), "")
	}
	lower := strings.ToLower(rest)
	for _, bad := range []string{"://", "url(", "@import", "@font-face", "data:", "xmlns"} {
		if i := strings.Index(lower, bad); i >= 0 {
			t.Errorf("the page has %q: …%s…", bad, rest[max(0, i-80):min(len(rest), i+80)])
		}
	}
	if strings.Contains(page, "font-family:Liberation Sans;") || strings.Count(page, "font-family:"+chartFonts+";") < 6*len(wantTitles) {
		t.Errorf("the charts' text does not ask for %s", chartFonts)
	}
	charts := Charts(r)
	if svg := string(charts[0].Charts[0].SVG); !strings.Contains(svg, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("a chart file lost its namespace, which a standalone SVG needs:\n%.300s", svg)
	}
}

// runURLs are the addresses a run's report names: its workloads' targets
// and its components' metrics endpoints.
func runURLs(r *view.Run) []string {
	url := regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s"<>]+`)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		for _, u := range url.FindAllString(s, -1) {
			if !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
	for _, s := range r.Workloads {
		add(s.Workload.Target)
	}
	for _, c := range r.AllCells() {
		for _, comp := range c.Components {
			add(comp.MetricsURL)
		}
	}
	return out
}

// TestChartsLinkedFromMarkdown: report.md links the charts written
// beside it.
func TestChartsLinkedFromMarkdown(t *testing.T) {
	r := chartRun()
	charts := Charts(r)
	r.Charts = charts
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## Charts\n", "- workload high: [throughput](charts/cell0-phase1-throughput.svg) · [latency p50/p90/p99](charts/cell0-phase1-latency.svg)",
		"[latency spectrum](charts/cell0-phase1-spectrum.svg)\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if len(charts) != 2 || len(charts[0].Charts) != 6 || !bytes.HasPrefix(charts[0].Charts[0].SVG, []byte("<?xml")) ||
		!bytes.HasPrefix(inlineSVG(charts[0].Charts[0]), []byte("<svg role=\"img\" aria-label=\"Throughput")) {
		t.Errorf("charts: %d phases", len(charts))
	}
}
