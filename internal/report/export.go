package report

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// csvHeader are the columns of CSV: one row per operation per interval.
var csvHeader = []string{"workload", "operation", "start", "end", "requests", "errors", "rate_per_s",
	"latency_count", "p50_ms", "p90_ms", "p99_ms"}

// CSV writes every operation's figures, interval by interval, for a
// spreadsheet: time (RFC 3339, UTC, milliseconds), requests, errors,
// their rate and the latency percentiles of the interval's successful
// requests (empty where it had none). Workloads and operations are sorted
// by name, intervals by time.
func CSV(w io.Writer, r *view.Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, wl := range slices.Sorted(maps.Keys(r.OpTimelines)) {
		ops := r.OpTimelines[wl]
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			for _, f := range ops[op] {
				if err := cw.Write(csvRow(wl, op, f)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRow(workload, op string, f analysis.IntervalFigures) []string {
	ms := func(d time.Duration) string {
		if f.Latencies == 0 {
			return ""
		}
		return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64)
	}
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	return []string{workload, op, stamp(f.Start), stamp(f.End), strconv.FormatInt(f.Requests, 10),
		strconv.FormatInt(f.Errors, 10), strconv.FormatFloat(f.Rate, 'f', 3, 64), strconv.FormatInt(f.Latencies, 10),
		ms(f.P50), ms(f.P90), ms(f.P99)}
}

// junitSuites is a JUnit XML report as CI systems read it.
type junitSuites struct {
	XMLName xml.Name   `xml:"testsuites"`
	Suites  []junitSet `xml:"testsuite"`
}

type junitSet struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
}

// JUnit writes the run as a JUnit XML test suite for CI systems: one test
// case for the run's state (it fails unless the run completed) and one
// per SLO gate, failing when the gate failed or had insufficient data
// (as the exit code does), with the measured figure.
func JUnit(w io.Writer, r *view.Run) error {
	set := junitSet{Name: "perflab " + r.Name, Time: strconv.FormatFloat(r.Ended.Sub(r.Started).Seconds(), 'f', 3, 64)}
	if r.Ended.IsZero() {
		set.Time = "0"
	}
	state := junitCase{Name: "run state", ClassName: "perflab.run", Output: stateText(r)}
	if r.State != "completed" {
		state.Failure = &junitFailure{Type: r.State, Message: stateText(r)}
	}
	set.Cases = append(set.Cases, state)
	for _, g := range r.SLO {
		set.Cases = append(set.Cases, gateCase(g))
	}
	for _, c := range set.Cases {
		set.Tests++
		if c.Failure != nil {
			set.Failures++
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSet{set}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// gateCase is one SLO gate as a test case: its expression and the
// workload it was judged on, failing unless it passed.
func gateCase(g view.Gate) junitCase {
	name := g.Expr
	if g.Workload != "" {
		name += " on " + g.Workload
	}
	out := fmt.Sprintf("%s: %s", g.State, g.Measured)
	if g.Note != "" {
		out += " (" + g.Note + ")"
	}
	c := junitCase{Name: name, ClassName: "perflab.slo", Output: out}
	switch g.State {
	case analysis.GateFail:
		c.Failure = &junitFailure{Type: "failed", Message: fmt.Sprintf("%s: measured %s", g.Expr, g.Measured)}
	case analysis.GateInsufficient:
		c.Failure = &junitFailure{Type: "insufficient data", Message: fmt.Sprintf("%s: insufficient data: %s", g.Expr, g.Note)}
	}
	return c
}
