package cli

import (
	"errors"
	"io/fs"
	"strings"

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
	format := fs.String("format", "md", report.FormatNames(hasRun, true))
	write := fs.Bool("write", false, "write "+strings.Join(runFiles(), ", ")+", charts/ and sizes/ into the run directory again instead of printing (results.db is never changed)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab report needs one run directory")
	}
	f, ok := report.FormatNamed(*format)
	if !ok || f.Run == nil {
		return usageErrorf("--format %q: want %s", *format, report.FormatNames(hasRun, false))
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
	if err == nil {
		err = report.ReadSearch(r)
	}
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if *write {
		written, err := report.WriteFiles(store.Dir(), r)
		e.reportFiles(store.Dir(), written)
		if err != nil {
			return &runError{err: err, hint: "the run directory must be writable, with free space", code: ExitFailed}
		}
		return nil
	}
	if f.LinksCharts {
		r.Charts = report.WrittenCharts(store.Dir(), r)
	}
	return f.Run(e.stdout, r)
}

// hasRun keeps the formats a run is rendered in.
func hasRun(f report.Format) bool { return f.Run != nil }

// runFiles are the files of a run directory the formats are written to.
func runFiles() []string {
	var out []string
	for _, f := range report.Formats {
		if f.File != "" {
			out = append(out, f.File)
		}
	}
	return out
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
