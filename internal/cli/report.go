package cli

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// report renders the report of a run directory to stdout, or with --write
// writes the run's report files into the directory again. Either way the
// run is opened read-only: results.db is never changed, and without --write
// nothing in the directory is.
func (e *env) report(args []string) error {
	fs := newFlagSet("report", e)
	format := fs.String("format", "md", "md, json, html (self-contained, with charts), csv (one row per operation per interval) or junit (one test case per SLO gate)")
	write := fs.Bool("write", false, "write report.md, report.html, summary.json, charts/ and sizes/ into the run directory again instead of printing (results.db is never changed)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab report needs one run directory")
	}
	if !slices.Contains([]string{"md", "json", "html", "csv", "junit"}, *format) {
		return usageErrorf("--format %q: want md, json, html, csv or junit", *format)
	}
	if *write && set(fs, "format") {
		return usageErrorf("--write writes every format; --format chooses what is printed without it")
	}
	store, err := openRun(pos[0], "the directory")
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := readback.Load(store)
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if *write {
		written, err := readback.WriteReports(store, r)
		e.reportFiles(store.Dir(), written)
		if err != nil {
			return &runError{err: err, hint: "the run directory must be writable, with free space", code: ExitFailed}
		}
		return nil
	}
	switch *format {
	case "json":
		return report.JSON(e.stdout, r)
	case "html":
		return report.HTML(e.stdout, r)
	case "csv":
		return report.CSV(e.stdout, r)
	case "junit":
		return report.JUnit(e.stdout, r)
	}
	r.Charts = readback.WrittenCharts(store.Dir(), r)
	return report.Markdown(e.stdout, r)
}

// openRun opens the run directory dir given on the command line, read-only.
// A directory without a run in it is a bad argument (exit 2); a run that
// cannot be read is a failure. what names the argument in the hint.
func openRun(dir, what string) (*results.Run, error) {
	store, err := results.OpenReadOnly(dir)
	if err == nil {
		return store, nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &runError{err: err, hint: "give " + what + " perflab printed as 'run directory'", code: ExitUsage}
	case errors.Is(err, fs.ErrPermission):
		return nil, &runError{err: err, hint: "perflab needs to read " + dir + " and its results.db: check their permissions", code: ExitFailed}
	}
	return nil, &runError{err: err, code: ExitFailed,
		hint: "the run directory is there, but its results.db cannot be read as a run store (damaged, or cut short by a copy): " +
			"restore it from a backup; perflab report never changes it"}
}
