package report

import (
	"fmt"
	"html"
	"strings"
)

// A doc is a part of a report built once from the analysis figures and
// written both as Markdown and as HTML, so the two formats cannot show
// different figures. Its free text may hold two marks, strong and code,
// which each renderer writes its own way.
type doc struct {
	blocks []block
}

type blockKind uint8

const (
	blockHeading blockKind = iota
	blockPara
	blockList
	blockOrdered
	blockTable
	blockCode
	blockSVG // a chart drawn into the HTML page; Markdown leaves it out
)

// block is one heading, paragraph, list, table or code block of a doc.
type block struct {
	kind  blockKind
	level int    // of a heading: 2 is "##" and <h2>
	id    string // of a heading: its anchor in HTML; "" for none
	text  string // of a heading, a paragraph or a code block
	lang  string // of a code block
	items []item // of a list
	table *table
	svg   []byte // of a chart
}

// item is one entry of a list; a warning is written as one.
type item struct {
	text    string
	warning bool
}

// table is a table of text cells; Right marks the columns of figures and
// Fail the rows to mark as failed. A facts table has no header: each row
// is a name and its value.
type table struct {
	Title string // a heading above the table, in HTML pages only
	Note  string // a paragraph above the table, in HTML pages only
	Head  []string
	Right []bool
	Rows  [][]string
	Fail  []bool
	Facts bool
}

// The marks free text may hold; strong and code put them around a text.
const (
	markStrong = "\x01"
	markCode   = "\x02"
)

func strong(s string) string { return markStrong + unmarked(s) + markStrong }
func code(s string) string   { return markCode + unmarked(s) + markCode }

// codeMarks turns the Markdown code spans of a name given in Markdown
// (a ComparisonGroup's) into code marks: "Profile `low`".
func codeMarks(s string) string {
	parts := strings.Split(unmarked(s), "`")
	if len(parts)%2 == 0 {
		return unmarked(s) // an odd number of backticks: not code spans
	}
	return strings.Join(parts, markCode)
}

// unmarked is s without marks, so a name can't open or close one.
func unmarked(s string) string {
	return strings.NewReplacer(markStrong, "", markCode, "").Replace(s)
}

func (d *doc) heading(level int, text string) { d.headingID(level, "", text) }

// headingID adds a heading with an anchor, which the HTML page's table of
// contents links.
func (d *doc) headingID(level int, id, text string) {
	d.blocks = append(d.blocks, block{kind: blockHeading, level: level, id: id, text: text})
}

// anchors are the headings of d that have an anchor.
func (d *doc) anchors() []htmlLink {
	var out []htmlLink
	for _, bl := range d.blocks {
		if bl.kind == blockHeading && bl.id != "" {
			out = append(out, htmlLink{ID: bl.id, Text: unmarked(bl.text)})
		}
	}
	return out
}

func (d *doc) para(text string) { d.blocks = append(d.blocks, block{kind: blockPara, text: text}) }

func (d *doc) paraf(format string, args ...any) { d.para(fmt.Sprintf(format, args...)) }

// list adds a bulleted list; nothing when it has no items.
func (d *doc) list(items ...item) {
	if len(items) > 0 {
		d.blocks = append(d.blocks, block{kind: blockList, items: items})
	}
}

func (d *doc) ordered(texts []string) {
	b := block{kind: blockOrdered}
	for _, t := range texts {
		b.items = append(b.items, item{text: t})
	}
	d.blocks = append(d.blocks, b)
}

// warnings adds a list of warnings; nothing when there are none.
func (d *doc) warnings(ws []string) { d.list(warningItems(ws)...) }

func warningItems(ws []string) []item {
	var out []item
	for _, w := range ws {
		out = append(out, item{text: w, warning: true})
	}
	return out
}

func (d *doc) table(t *table) { d.blocks = append(d.blocks, block{kind: blockTable, table: t}) }

// chart adds a chart that only the HTML page shows.
func (d *doc) chart(svg []byte) { d.blocks = append(d.blocks, block{kind: blockSVG, svg: svg}) }

func (d *doc) code(lang, text string) {
	d.blocks = append(d.blocks, block{kind: blockCode, lang: lang, text: text})
}

// markdown writes d: a heading after a blank line and followed by one,
// every other block after a blank line unless it follows a heading.
func (d *doc) markdown(b *strings.Builder) {
	for i, bl := range d.blocks {
		if bl.kind == blockHeading {
			heading(b, bl.level, "%s", mdText(bl.text))
			continue
		}
		if bl.kind == blockSVG {
			continue // report.html draws it
		}
		if i > 0 && d.blocks[i-1].kind != blockHeading {
			b.WriteString("\n")
		}
		switch bl.kind {
		case blockPara:
			b.WriteString(mdText(bl.text) + "\n")
		case blockList:
			for _, it := range bl.items {
				fmt.Fprintf(b, "- %s\n", mdItem(it))
			}
		case blockOrdered:
			for n, it := range bl.items {
				fmt.Fprintf(b, "%d. %s\n", n+1, mdItem(it))
			}
		case blockTable:
			bl.table.markdown(b)
		case blockCode:
			fmt.Fprintf(b, "```%s\n%s", bl.lang, bl.text)
			if !strings.HasSuffix(bl.text, "\n") {
				b.WriteString("\n")
			}
			b.WriteString("```\n")
		}
	}
}

func mdItem(it item) string {
	if it.warning {
		return "**Warning:** " + mdText(it.text)
	}
	return mdText(it.text)
}

// mdText writes the marks as Markdown.
func mdText(s string) string {
	return strings.NewReplacer(markStrong, "**", markCode, "`").Replace(s)
}

// markdown writes t as a Markdown table, each cell's '|' escaped.
func (t *table) markdown(b *strings.Builder) {
	head, sep := t.Head, make([]string, len(t.Head))
	if t.Facts {
		head, sep = []string{"", ""}, make([]string, 2)
	}
	for i := range sep {
		sep[i] = "---"
		if i < len(t.Right) && t.Right[i] {
			sep[i] = "---:"
		}
	}
	if t.Facts {
		b.WriteString("| | |\n")
	} else {
		mdRow(b, head)
	}
	b.WriteString("|" + strings.Join(sep, "|") + "|\n")
	for _, r := range t.Rows {
		mdRow(b, r)
	}
}

func mdRow(b *strings.Builder, cells []string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEscape(mdText(c))
	}
	b.WriteString("| " + strings.Join(out, " | ") + " |\n")
}

// html writes d as HTML, every text escaped.
func (d *doc) html(b *strings.Builder) {
	for _, bl := range d.blocks {
		switch bl.kind {
		case blockHeading:
			l, id := min(max(bl.level, 1), 6), ""
			if bl.id != "" {
				id = fmt.Sprintf(` id="%s"`, html.EscapeString(bl.id))
			}
			fmt.Fprintf(b, "<h%d%s>%s</h%d>\n", l, id, markedHTML(bl.text), l)
		case blockPara:
			fmt.Fprintf(b, "<p>%s</p>\n", markedHTML(bl.text))
		case blockList, blockOrdered:
			tag := "ul"
			if bl.kind == blockOrdered {
				tag = "ol"
			}
			b.WriteString("<" + tag + ">")
			for _, it := range bl.items {
				if it.warning {
					fmt.Fprintf(b, `<li class="warning">Warning: %s</li>`, markedHTML(it.text))
				} else {
					fmt.Fprintf(b, "<li>%s</li>", markedHTML(it.text))
				}
			}
			b.WriteString("</" + tag + ">\n")
		case blockTable:
			bl.table.html(b)
		case blockCode:
			fmt.Fprintf(b, "<pre><code class=\"language-%s\">%s</code></pre>\n", html.EscapeString(bl.lang), html.EscapeString(unmarked(bl.text)))
		case blockSVG:
			b.Write(bl.svg) // drawn by lineChart: its text escaped there
			b.WriteString("\n")
		}
	}
}

// html writes t as an HTML table: figures right-aligned, failed rows
// marked; a facts table as rows of a name and its value.
func (t *table) html(b *strings.Builder) {
	if t.Title != "" {
		fmt.Fprintf(b, "<h5>%s</h5>\n", markedHTML(t.Title))
	}
	if t.Note != "" {
		fmt.Fprintf(b, "<p>%s</p>\n", markedHTML(t.Note))
	}
	if t.Facts {
		b.WriteString("<table class=\"facts\">\n")
		for _, r := range t.Rows {
			if len(r) == 2 {
				fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", markedHTML(r[0]), markedHTML(r[1]))
			}
		}
		b.WriteString("</table>\n")
		return
	}
	on := func(flags []bool, i int) bool { return i < len(flags) && flags[i] }
	cls := func(i int) string {
		if on(t.Right, i) {
			return ` class="n"`
		}
		return ""
	}
	b.WriteString("<table>\n<thead><tr>")
	for i, h := range t.Head {
		fmt.Fprintf(b, "<th%s>%s</th>", cls(i), markedHTML(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for r, row := range t.Rows {
		if on(t.Fail, r) {
			b.WriteString(`<tr class="fail">`)
		} else {
			b.WriteString("<tr>")
		}
		for i, c := range row {
			fmt.Fprintf(b, "<td%s>%s</td>", cls(i), markedHTML(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// markedHTML escapes s and writes its marks as <strong> and <code>,
// closing any a text leaves open.
func markedHTML(s string) string {
	var b strings.Builder
	var inStrong, inCode bool
	for s != "" {
		i := strings.IndexAny(s, markStrong+markCode)
		if i < 0 {
			b.WriteString(html.EscapeString(s))
			break
		}
		b.WriteString(html.EscapeString(s[:i]))
		switch s[i : i+1] {
		case markStrong:
			b.WriteString(map[bool]string{false: "<strong>", true: "</strong>"}[inStrong])
			inStrong = !inStrong
		default:
			b.WriteString(map[bool]string{false: "<code>", true: "</code>"}[inCode])
			inCode = !inCode
		}
		s = s[i+1:]
	}
	if inCode {
		b.WriteString("</code>")
	}
	if inStrong {
		b.WriteString("</strong>")
	}
	return b.String()
}
