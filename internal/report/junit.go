package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// The JUnit XML that CI systems read (Jenkins, GitLab, GitHub's test
// reporters) has the shape of Jenkins xUnit's junit-10.xsd: testsuites
// (name, tests, failures, errors, time) holding testsuite (name, tests,
// failures, errors, skipped, time, timestamp, hostname) holding testcase
// (name, classname, time), each with at most one failure or skipped
// (message and type as attributes, the detail as text, which GitLab shows)
// and its system-out.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Hostname  string      `xml:"hostname,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

// junitFailure is a failure or a skip: why in one line, and the detail.
type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Detail  string `xml:",cdata"`
}

// The test cases' classes, which CI systems group by.
const (
	classRun     = "perflab.run"
	classLoad    = "perflab.load"
	classMachine = "perflab.machine"
	classSize    = "perflab.size"
	classSLO     = "perflab.slo"
	classSearch  = "perflab.search"
)

// JUnit writes the run as a JUnit XML test suite for CI systems, one test
// case per check the run makes: "run completed" (failing unless it did,
// so that a failed run is a failing test, not an empty file); per phase,
// "load sustained" (the system held the load asked for: no shortfall,
// drops, failures or knee, and the generator kept up) and "machine not
// the limit" (neither machine-bound nor machine-busy), each skipped for a
// phase that did not complete; per size perflab size --verify judged,
// "size verified"; per SLO gate, the gate, failing when it failed or had
// insufficient data, as the exit code does. A capacity search has, for
// its phases, whether it found a rate that meets its SLO.
func JUnit(w io.Writer, r *view.Run) error {
	suite := junitSuite{Name: "perflab " + r.Name, Time: runSeconds(r), Hostname: r.Host}
	if !r.Started.IsZero() {
		suite.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	suite.Cases = append(suite.Cases, runCase(r))
	if r.Search != nil {
		suite.Cases = append(suite.Cases, searchCases(r.Search)...)
	} else {
		suite.Cases = append(suite.Cases, phaseCases(r)...)
	}
	for _, g := range r.SLO {
		suite.Cases = append(suite.Cases, gateCase(g))
	}
	for _, c := range suite.Cases {
		suite.Tests++
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	all := junitSuites{Name: "perflab", Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitTime is d in seconds as JUnit's time attribute writes it.
func junitTime(d time.Duration) string {
	return strconv.FormatFloat(max(d, 0).Seconds(), 'f', 3, 64)
}

func runSeconds(r *view.Run) string {
	if r.Ended.IsZero() || r.Started.IsZero() {
		return junitTime(0)
	}
	return junitTime(r.Ended.Sub(r.Started))
}

// runCase is "run completed": failing, with the run's state and message,
// unless the run completed (an SLO not met is its gates' failure).
func runCase(r *view.Run) junitCase {
	c := junitCase{Name: "run completed", ClassName: classRun, Time: runSeconds(r), Output: stateText(r)}
	if r.State != "completed" {
		c.Failure = &junitFailure{Type: r.State, Message: "the run did not complete: " + stateText(r),
			Detail: fmt.Sprintf("run %s (%s)\n%s", r.Name, r.Dir, stateText(r))}
	}
	return c
}

// phaseCases are each phase's checks, cell by cell, and each verified
// size's.
func phaseCases(r *view.Run) []junitCase {
	var out []junitCase
	cells := r.AllCells()
	for _, c := range cells {
		for _, p := range c.Phases {
			name := casePhase(c, p, len(cells) > 1)
			t := junitTime(phaseSpan(p))
			var h analysis.Held
			if p.Held != nil {
				h = *p.Held
			}
			out = append(out, sustainedCase(name, t, p, h, p.Held != nil), machineCase(name, t, p, h, p.Held != nil))
		}
		if c.Insights != nil {
			for _, s := range c.Insights.Sizes {
				if s.Verified != nil {
					out = append(out, verifiedCase(c, s, len(cells) > 1))
				}
			}
		}
	}
	return out
}

// phaseSpan is how long p's load ran: from its start to the end of its
// load, or for an implicit phase its workloads' window; 0 when unknown.
func phaseSpan(p *view.Phase) time.Duration {
	if !p.Start.IsZero() && !p.LoadEnd.IsZero() {
		return p.LoadEnd.Sub(p.Start)
	}
	var span time.Duration
	for _, s := range p.Workloads {
		if !s.Window.Start.IsZero() && !s.Window.End.IsZero() {
			span = max(span, s.Window.End.Sub(s.Window.Start))
		}
	}
	return span
}

// casePhase names a phase in a test case: "profile small", "workload
// http", with its cell in a matrix: "cell gomemlimit=1GiB, profile small".
func casePhase(c *view.Cell, p *view.Phase, matrix bool) string {
	name := "profile " + p.Profile
	if p.Implicit || p.Profile == "" {
		var ws []string
		for _, s := range p.Workloads {
			ws = append(ws, s.Workload.Name)
		}
		name = "workload " + strings.Join(ws, ", ")
	}
	if matrix && c.Name != "" {
		name = "cell " + c.Name + ", " + name
	}
	return name
}

// phaseDone reports whether p ran to its end; an implicit phase has no
// state of its own and did.
func phaseDone(p *view.Phase) bool { return p.State == "" || p.State == "completed" }

// notJudged is a phase's check that was not made: its phase did not
// complete, or ran no workload.
func notJudged(p *view.Phase) *junitFailure {
	why := "the phase ran no workload"
	switch {
	case len(p.Workloads) > 0 && phaseDone(p):
		why = "the run has no verdict on it"
	case !phaseDone(p):
		why = "the phase did not complete: " + stateOf(p.State, p.Message, "", p.InProgress)
	}
	return &junitFailure{Type: "not judged", Message: why}
}

// sustainedCase is "load sustained": the system held the load asked for,
// and the generator kept up with it.
func sustainedCase(name, t string, p *view.Phase, h analysis.Held, judged bool) junitCase {
	c := junitCase{Name: "load sustained: " + name, ClassName: classLoad, Time: t}
	switch {
	case !judged:
		c.Skipped = notJudged(p)
	case !h.Sustained():
		c.Failure = &junitFailure{Type: "unsustained", Message: "the system did not hold the load: " + h.Why(),
			Detail: strings.Join(h.Unsustained, "\n") + "\nits figures are of a system past its capacity, not of one serving that load"}
	case h.ClientBound:
		why := clientWhy(p)
		c.Failure = &junitFailure{Type: "client-bound", Message: "the load generator, not the system, was the limit: " + why,
			Detail: why + "\nthe load asked for was not made: give perflab more CPU, or run it with --workers"}
	default:
		c.Output = "held: " + loadText(p)
	}
	return c
}

// clientWhy is why a phase's workloads were client-bound.
func clientWhy(p *view.Phase) string {
	var whys []string
	for _, s := range p.Workloads {
		if s.ClientBound && s.ClientWhy != "" {
			whys = append(whys, s.ClientWhy)
		}
	}
	if len(whys) == 0 && p.Resources != nil && p.Resources.ClientBound {
		whys = append(whys, fmt.Sprintf("the generator used %.2f cores", p.Resources.GeneratorCPU))
	}
	if len(whys) == 0 {
		return "the generator was the limit"
	}
	return strings.Join(whys, "; ")
}

// loadText is what a phase's workloads achieved: "http 100/s".
func loadText(p *view.Phase) string {
	var parts []string
	for _, s := range p.Workloads {
		parts = append(parts, fmt.Sprintf("%s %s/s", s.Workload.Name, strconv.FormatFloat(s.Rate, 'f', 1, 64)))
	}
	return strings.Join(parts, ", ")
}

// machineCase is "machine not the limit": the generator and the
// components perflab started did not fill the machine (machine-bound),
// nor did other work (machine-busy); either way the machine, not the
// system, would have set the figures.
func machineCase(name, t string, p *view.Phase, h analysis.Held, judged bool) junitCase {
	c := junitCase{Name: "machine not the limit: " + name, ClassName: classMachine, Time: t}
	switch {
	case !judged:
		c.Skipped = notJudged(p)
	case h.MachineBound != "":
		c.Failure = &junitFailure{Type: "machine-bound", Message: "machine-bound: " + h.MachineBound,
			Detail: h.MachineBound + "\n" + analysis.MachineAdvice}
	case h.MachineBusy != "":
		c.Failure = &junitFailure{Type: "machine-busy", Message: "machine-busy: " + h.MachineBusy,
			Detail: h.MachineBusy + "\n" + analysis.MachineBusyAdvice}
	default:
		c.Output = "the machine had room to spare"
	}
	return c
}

// verifiedCase is "size verified": perflab size --verify's verdict on a
// size, failing when the size does not hold, skipped when the verdict is
// inconclusive (a busy machine).
func verifiedCase(cell *view.Cell, s analysis.TShirt, matrix bool) junitCase {
	name := "size verified: " + s.Size
	if matrix && cell.Name != "" {
		name = "size verified: cell " + cell.Name + ", " + s.Size
	}
	v := s.Verified
	c := junitCase{Name: name, ClassName: classSize, Time: junitTime(0)}
	detail := strings.Join(append(append([]string{}, v.Reasons...), v.Warnings...), "\n")
	switch {
	case v.Inconclusive:
		c.Skipped = &junitFailure{Type: "inconclusive", Message: "neither held nor broke: " + strings.Join(v.Reasons, "; "), Detail: detail}
	case !v.Holds:
		c.Failure = &junitFailure{Type: "does not hold", Message: fmt.Sprintf("size %s does not hold %s: %s", s.Size, v.Load, strings.Join(v.Reasons, "; ")),
			Detail: detail + "\nconfined run: " + v.Run}
	default:
		c.Output = fmt.Sprintf("size %s holds %s inside its limits (confined run %s)", s.Size, v.Load, v.Run)
	}
	return c
}

// searchCases are a capacity search's check: that it found a rate at
// which every gate passed. A sweep finds rates, not a pass: it has none.
func searchCases(s *view.Search) []junitCase {
	if s.Sweep != nil {
		return nil
	}
	c := junitCase{Name: "search found a rate that meets the SLO", ClassName: classSearch, Time: junitTime(0)}
	if s.Sustained > 0 {
		c.Output = fmt.Sprintf("%s/s met %s (limit: %s)", strconv.FormatFloat(s.Sustained, 'f', -1, 64), strings.Join(s.Gates, ", "), s.Limit)
		return []junitCase{c}
	}
	msg := fmt.Sprintf("no rate from %s/s met %s", strconv.FormatFloat(s.Start, 'f', -1, 64), strings.Join(s.Gates, ", "))
	var why []string
	for _, st := range s.Steps {
		why = append(why, fmt.Sprintf("step %d at %s/s: %s", st.N, strconv.FormatFloat(st.Rate, 'f', -1, 64), st.Why))
	}
	c.Failure = &junitFailure{Type: "no rate met the SLO", Message: msg, Detail: strings.Join(why, "\n")}
	return []junitCase{c}
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
	c := junitCase{Name: name, ClassName: classSLO, Time: junitTime(0), Output: out}
	detail := fmt.Sprintf("gate %s (from %s) on %s\nmeasured: %s", g.Expr, orText(g.Source, "the run"), orText(g.Workload, "the run"), orText(g.Measured, "nothing"))
	if g.Note != "" {
		detail += "\n" + g.Note
	}
	switch g.State {
	case analysis.GateFail:
		c.Failure = &junitFailure{Type: "failed", Message: fmt.Sprintf("%s: measured %s", g.Expr, g.Measured), Detail: detail}
	case analysis.GateInsufficient:
		c.Failure = &junitFailure{Type: "insufficient data", Message: fmt.Sprintf("%s: insufficient data: %s", g.Expr, g.Note), Detail: detail}
	}
	return c
}

func orText(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}
