// Package report renders a run's read model (internal/view): the
// terminal tables a run prints, report.md, a self-contained report.html
// with SVG charts, summary.json, CSV, JUnit and the sizes' Kubernetes
// YAML; a capacity search's and perflab compare's own reports. Formats is
// every format, by the name --format takes; WriteFiles writes a run's
// files into its run directory. A report only reads figures: it never
// runs load and decides nothing of a run.
package report

import (
	"io"
	"strings"

	"github.com/perflab/perflab/internal/view"
)

// Format is one way to render: the name --format takes, a word of help,
// and its writers of a run, a capacity search and a comparison (perflab
// compare), each nil where it has none. File and SearchFile are the
// files of a run directory it is written to (WriteFiles,
// WriteSearchFiles); "" for none.
type Format struct {
	Name, Help string
	Run        func(io.Writer, *view.Run) error
	File       string
	// LinksCharts is set for a format that links the chart files beside
	// it (charts/) instead of drawing them in: rendered again from a run
	// directory, it links those the directory holds (WrittenCharts).
	LinksCharts bool
	Search      func(io.Writer, *view.Search) error
	SearchFile  string
	Compare     func(io.Writer, *view.RunComparison) error
}

// Formats are every format, in the order help lists them and WriteFiles
// writes their files.
var Formats = []Format{
	{Name: "terminal", Help: "the tables a run prints", Run: Terminal, Search: SearchTerminal},
	{Name: "md", Run: Markdown, File: "report.md", LinksCharts: true, Search: SearchMarkdown, SearchFile: "search.md",
		Compare: CompareMarkdown},
	{Name: "html", Help: "self-contained, with charts", Run: HTML, File: "report.html"},
	{Name: "json", Run: JSON, File: "summary.json", Search: SearchJSON, SearchFile: "search.json", Compare: CompareJSON},
	{Name: "csv", Help: "one row per operation per interval, in time order", Run: CSV},
	{Name: "junit", Help: "one test case per run check and SLO gate, for CI", Run: JUnit},
}

// FormatNamed is the format called name, if there is one.
func FormatNamed(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// FormatNames lists the names of the formats keep selects, for help and
// errors: "md or json"; with help, each followed by its Help: "md, html
// (self-contained, with charts) or json".
func FormatNames(keep func(Format) bool, help bool) string {
	var names []string
	for _, f := range Formats {
		if !keep(f) {
			continue
		}
		if help && f.Help != "" {
			names = append(names, f.Name+" ("+f.Help+")")
		} else {
			names = append(names, f.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
