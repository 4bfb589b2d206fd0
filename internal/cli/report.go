package cli

import (
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// report renders the report of a run directory to stdout.
func (e *env) report(args []string) error {
	fs := newFlagSet("report", e)
	format := fs.String("format", "md", "md, json or html (self-contained, with charts)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab report needs one run directory")
	}
	if *format != "md" && *format != "json" && *format != "html" {
		return usageErrorf("--format %q: want md, json or html", *format)
	}
	store, err := results.Open(pos[0])
	if err != nil {
		return &runError{err: err, hint: "give the directory perflab printed as 'run directory'", code: ExitFailed}
	}
	defer store.Close()
	r, err := loadRun(store)
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	switch *format {
	case "json":
		return report.JSON(e.stdout, r)
	case "html":
		return report.HTML(e.stdout, r)
	}
	r.Charts = writtenCharts(store.Dir(), r)
	return report.Markdown(e.stdout, r)
}
