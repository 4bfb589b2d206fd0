package cli

import (
	"errors"
	"flag"
	"io"
	"path/filepath"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/view"
)

// ciFlags are what perflab run, http and search write for a CI system
// besides the run directory: --junit FILE and --csv FILE (a plan's
// output: says the same; the flags win), and --run-dir, a run directory
// of a fixed name instead of a new one under --out.
type ciFlags struct {
	junit, csv, runDir string
	name               string // the run's, for a JUnit file of a run that never started
}

func (f *ciFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.junit, "junit", "", "also write the run's checks and SLO gates as JUnit XML to `FILE`, for CI: a failed run is a failing test case")
	fs.StringVar(&f.csv, "csv", "", "also write the run's intervals as CSV to `FILE`: a row per operation per interval, in time order")
	fs.StringVar(&f.runDir, "run-dir", "", "write the run into `DIR` itself (it must not exist, or be empty) instead of a new directory under --out")
}

// check refuses flags that contradict each other: --run-dir beside --out
// (given), one file for two outputs.
func (f ciFlags) check(outGiven bool) error {
	if f.runDir != "" && outGiven {
		return usageErrorf("--run-dir names the run directory itself, --out the parent of a new one: give one of them")
	}
	if f.junit != "" && filepath.Clean(f.junit) == filepath.Clean(f.csv) {
		return usageErrorf("--junit and --csv name the same file %s: give each its own", f.junit)
	}
	return nil
}

// withPlan is f with the files of p's output: section where f names none,
// each relative to the plan's directory.
func (f ciFlags) withPlan(p *plan.Plan) ciFlags {
	if f.junit == "" {
		f.junit = p.OutputPath(p.Output.JUnit)
	}
	if f.csv == "" {
		f.csv = p.OutputPath(p.Output.CSV)
	}
	return f
}

// write writes the files f names of r; r nil is a run that ended before
// it had a report (err says why): its JUnit is one failing test case, so
// that CI shows the failure rather than a missing file.
func (f ciFlags) write(r *view.Run, name string, err error) error {
	if r == nil {
		if f.junit == "" || err == nil {
			return nil
		}
		r = &view.Run{Name: name, State: "failed", Message: err.Error()}
	}
	var errs []error
	if f.junit != "" {
		errs = append(errs, writeFormat(f.junit, report.JUnit, r))
	}
	if f.csv != "" {
		errs = append(errs, writeFormat(f.csv, report.CSV, r))
	}
	if err := errors.Join(errs...); err != nil {
		return &runError{err: err, code: ExitFailed, hint: "--junit and --csv name files in a writable directory"}
	}
	return nil
}

// writeFormat renders r with render into the file at path, whole or not
// at all, making its directory.
func writeFormat(path string, render func(io.Writer, *view.Run) error, r *view.Run) error {
	return report.WriteFile(path, func(w io.Writer) error { return render(w, r) })
}

// files are the files f names, by what they are, for the lines saying
// where a run's files are.
func (f ciFlags) files() [][2]string {
	var out [][2]string
	if f.junit != "" {
		out = append(out, [2]string{"junit", f.junit})
	}
	if f.csv != "" {
		out = append(out, [2]string{"csv", f.csv})
	}
	return out
}
