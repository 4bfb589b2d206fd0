package cli

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/view"
)

// TestReportCSVAndJUnit (issue 20, item 4): perflab report --format csv
// gives a row per operation per interval of a stored run (two cells of 30
// one-second intervals of one operation: 60 rows), --format junit a JUnit
// suite whose "run completed" case fails for a run that failed, and whose
// checks of each phase fail where the fixture's second cell was client-
// and machine-bound, --format terminal the tables the run printed.
func TestReportCSVAndJUnit(t *testing.T) {
	dir := resultstest.WritePlanRun(t, t.TempDir())
	code, out, errs := mainOut("report", dir, "--format", "csv")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 61 || rows[1][5] != "GET /" || rows[1][6] != "50" || rows[1][10] != "2.000" {
		t.Errorf("csv: %d rows, %v; first %q", len(rows), err, rows[1])
	}
	code, out, errs = mainOut("report", dir, "--format", "junit")
	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if code != 0 || xml.Unmarshal([]byte(out), &suites) != nil || len(suites.Suites) != 1 || suites.Suites[0].Failures != 3 ||
		suites.Suites[0].Tests != 5 {
		t.Errorf("junit: exit %d: %s\n%s", code, errs, out)
	}
	if code, out, errs := mainOut("report", dir, "--format", "terminal"); code != 0 || !strings.Contains(out, "GET /") {
		t.Errorf("terminal: exit %d: %s\n%s", code, errs, out)
	}
	if code, _, errs := mainOut("report", dir, "--format", "yaml"); code != ExitUsage || !strings.Contains(errs, "csv or junit") {
		t.Errorf("an unknown format: exit %d: %s", code, errs)
	}
}

// TestAFakeFormatIsOneLine: a report format is a writer and one entry in
// report.Formats (here the test's): perflab report renders it by its
// name, its help lists it, and --write writes its file into the run
// directory beside the others.
func TestAFakeFormatIsOneLine(t *testing.T) {
	count := func(w io.Writer, r *view.Run) error {
		_, err := fmt.Fprintf(w, "%d cells, %s\n", len(r.Cells), r.State)
		return err
	}
	report.Formats = append(report.Formats, report.Format{Name: "count", Help: "cells and state", Run: count, File: "count.txt"})
	t.Cleanup(func() { report.Formats = report.Formats[:len(report.Formats)-1] })

	dir := resultstest.WritePlanRun(t, t.TempDir())
	if code, out, errs := mainOut("report", dir, "--format", "count"); code != 0 || out != "2 cells, failed\n" {
		t.Errorf("--format count: exit %d: %q %s", code, out, errs)
	}
	if _, out, _ := mainOut("report", "--help"); !strings.Contains(out, "count (cells and state)") {
		t.Errorf("report --help does not list count:\n%s", out)
	}
	if code, _, errs := mainOut("report", dir, "--write"); code != 0 {
		t.Fatalf("--write: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "count.txt")); err != nil || string(b) != "2 cells, failed\n" {
		t.Errorf("count.txt: %q, %v", b, err)
	}
}
