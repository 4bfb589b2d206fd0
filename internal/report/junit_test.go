package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// junitShape is the shape of Jenkins xUnit's junit-10.xsd, the schema
// CI systems' JUnit readers accept, written out for the test: each
// element's attributes (required ones marked "!") and the children it
// may have.
var junitShape = map[string]struct {
	attrs    []string
	children []string
}{
	"testsuites": {[]string{"name", "time", "tests", "failures", "errors"}, []string{"testsuite"}},
	"testsuite": {[]string{"name!", "tests!", "failures!", "errors!", "group", "time", "skipped", "timestamp", "hostname", "id",
		"package", "file", "log", "url"}, []string{"testsuite", "properties", "testcase", "system-out", "system-err"}},
	"testcase":   {[]string{"name!", "time", "classname", "group"}, []string{"skipped", "error", "failure", "system-out", "system-err"}},
	"failure":    {[]string{"type", "message"}, nil},
	"error":      {[]string{"type", "message"}, nil},
	"skipped":    {[]string{"type", "message"}, nil},
	"system-out": {nil, nil},
	"system-err": {nil, nil},
	"properties": {nil, []string{"property"}},
	"property":   {[]string{"name!", "value!"}, nil},
}

// surefireTime is junit-10.xsd's pattern of a time attribute.
var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

// checkJUnitShape fails t unless doc has junitShape: testsuites at the
// root, only the elements and attributes it allows where it allows them,
// the required attributes there, times as the schema writes them, and
// each testsuite's counts those of its test cases.
func checkJUnitShape(t *testing.T, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	type counts struct{ tests, failures, errors, skipped int }
	var suites []counts
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			shape, ok := junitShape[name]
			switch {
			case !ok:
				t.Errorf("element <%s> is not in the schema", name)
			case len(stack) == 0 && name != "testsuites":
				t.Errorf("root <%s>, want <testsuites>", name)
			case len(stack) > 0 && !slices.Contains(junitShape[stack[len(stack)-1]].children, name):
				t.Errorf("<%s> inside <%s>", name, stack[len(stack)-1])
			}
			checkAttrs(t, name, el.Attr, shape.attrs)
			if name == "testsuite" {
				suites = append(suites, counts{})
				for _, a := range el.Attr {
					n, _ := strconv.Atoi(a.Value)
					switch a.Name.Local {
					case "tests":
						suites[len(suites)-1].tests = -n
					case "failures":
						suites[len(suites)-1].failures = -n
					case "errors":
						suites[len(suites)-1].errors = -n
					case "skipped":
						suites[len(suites)-1].skipped = -n
					}
				}
			}
			if len(suites) > 0 {
				c := &suites[len(suites)-1]
				switch name {
				case "testcase":
					c.tests++
				case "failure":
					c.failures++
				case "error":
					c.errors++
				case "skipped":
					c.skipped++
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	for i, c := range suites {
		if c != (counts{}) {
			t.Errorf("testsuite %d: its counts are off from its test cases by %+v", i, c)
		}
	}
}

func checkAttrs(t *testing.T, el string, attrs []xml.Attr, allowed []string) {
	t.Helper()
	have := map[string]string{}
	for _, a := range attrs {
		have[a.Name.Local] = a.Value
		if !slices.Contains(allowed, a.Name.Local) && !slices.Contains(allowed, a.Name.Local+"!") {
			t.Errorf("<%s %s=…>: not in the schema", el, a.Name.Local)
		}
		if a.Name.Local == "time" && !surefireTime.MatchString(a.Value) {
			t.Errorf("<%s time=%q>: not a time the schema takes", el, a.Value)
		}
	}
	for _, a := range allowed {
		if name, ok := strings.CutSuffix(a, "!"); ok {
			if _, ok := have[name]; !ok {
				t.Errorf("<%s> lacks the required %s", el, name)
			}
		}
	}
}

// TestJUnitShapeChecker: the checker itself fails what the schema
// refuses, so that its passing means something.
func TestJUnitShapeChecker(t *testing.T) {
	for _, doc := range []string{
		`<testsuite name="x" tests="0" failures="0" errors="0"></testsuite>`,
		`<testsuites><testsuite name="x" tests="1" failures="0"><testcase name="a"/></testsuite></testsuites>`,
		`<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase name="a" time="1s"/></testsuite></testsuites>`,
		`<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase name="a"><failure/></testcase></testsuite></testsuites>`,
		`<testsuites skipped="0"><testsuite name="x" tests="0" failures="0" errors="0"></testsuite></testsuites>`,
		`<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase><bogus/></testcase></testsuite></testsuites>`,
	} {
		ft := &testing.T{}
		done := make(chan struct{})
		go func() { defer close(done); checkJUnitShape(ft, []byte(doc)) }()
		<-done
		if !ft.Failed() {
			t.Errorf("the checker passed %s", doc)
		}
	}
}

func junitOf(t *testing.T, r *view.Run) (junitSuites, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := JUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	checkJUnitShape(t, b.Bytes())
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%s\n%v", b.String(), err)
	}
	if len(got.Suites) != 1 {
		t.Fatalf("%d suites, want 1\n%s", len(got.Suites), b.String())
	}
	return got, b.Bytes()
}

func caseNamed(t *testing.T, s junitSuite, name string) junitCase {
	t.Helper()
	for _, c := range s.Cases {
		if c.Name == name {
			return c
		}
	}
	var names []string
	for _, c := range s.Cases {
		names = append(names, c.Name)
	}
	t.Fatalf("no test case %q in %q", name, names)
	return junitCase{}
}

// TestJUnitGates: every gate is a test case; a failed gate and one with
// insufficient data fail, as the exit code does, with the measured figure
// in the message and the detail as text; a passed one does not; a run
// that did not complete fails "run completed", so a failed run is never
// an empty file.
func TestJUnitGates(t *testing.T) {
	gate := func(expr string, s analysis.GateState, measured string) view.Gate {
		return view.Gate{Verdict: analysis.Verdict{Expr: expr, Workload: "p/get", State: s, Measured: measured}, Source: "command line"}
	}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		state    string
		failures int
	}{{"completed", 2}, {"failed", 3}} {
		r := &view.Run{Name: "t", State: c.state, Message: "target unreachable", Started: t0, Ended: t0.Add(90 * time.Second),
			SLO: []view.Gate{gate("p99 < 200ms", analysis.GatePass, "183ms"), gate("error_rate < 0.1%", analysis.GateFail, "0.5%"),
				gate("p99.9 < 1s", analysis.GateInsufficient, "")}}
		got, doc := junitOf(t, r)
		s := got.Suites[0]
		if s.Failures != c.failures || s.Time != "90.000" || got.Tests != s.Tests || got.Failures != s.Failures {
			t.Errorf("%s run: %+v, want %d failures\n%s", c.state, got, c.failures, doc)
		}
		if f := caseNamed(t, s, "error_rate < 0.1% on p/get").Failure; f == nil || f.Type != "failed" ||
			!strings.Contains(f.Message, "0.5%") || !strings.Contains(f.Detail, "from command line") {
			t.Errorf("the failed gate: %+v", f)
		}
		if c := caseNamed(t, s, "p99 < 200ms on p/get"); c.Failure != nil || c.ClassName != classSLO {
			t.Errorf("the passed gate: %+v", c)
		}
		if f := caseNamed(t, s, "p99.9 < 1s on p/get").Failure; f == nil || f.Type != "insufficient data" {
			t.Errorf("the gate with insufficient data: %+v", f)
		}
		ran := caseNamed(t, s, "run completed")
		if (ran.Failure != nil) != (c.state != "completed") || ran.Failure != nil && !strings.Contains(ran.Failure.Message, "target unreachable") {
			t.Errorf("%s run: run completed: %+v", c.state, ran)
		}
	}
}

// TestJUnitRunChecks: a case per phase for its load held and for the
// machine, failing with the reason when the load fell short or the
// machine was full, skipped for a phase that did not complete; a case
// per verified size, failing when it does not hold.
func TestJUnitRunChecks(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	sum := func(name string, target, rate float64) *analysis.Summary {
		return &analysis.Summary{Workload: analysis.Workload{Name: name, Model: "open", TargetRate: target}, Rate: rate, Requests: int64(rate * 10)}
	}
	phase := func(profile string, s *analysis.Summary, res *analysis.Resources) *view.Phase {
		return &view.Phase{Profile: profile, State: "completed", Start: t0, LoadEnd: t0.Add(10 * time.Second),
			Workloads: []*analysis.Summary{s}, Resources: res}
	}
	held := phase("small", sum("small/get", 100, 99), nil)
	short := phase("large", sum("large/get", 1000, 600), &analysis.Resources{MachineBound: true, MachineWhy: "2.0 of 2 cores busy"})
	broken := &view.Phase{Profile: "xl", State: "failed", Message: "component exited"}
	cell := &view.Cell{Name: "", Phases: []*view.Phase{held, short, broken}, Insights: &analysis.Insights{Sizes: []analysis.TShirt{
		{Size: "small", Verified: &analysis.Verified{Size: "small", Load: "100/s", Holds: true}},
		{Size: "large", Held: analysis.Held{Unsustained: []string{"workload large/get achieved 600/s of the 1000/s asked"},
			MachineBound: "2.0 of 2 cores busy"},
			Verified: &analysis.Verified{Size: "large", Load: "600/s", Reasons: []string{"component app was OOM-killed"}}},
	}}}
	held.Held, short.Held = &cell.Insights.Sizes[0].Held, &cell.Insights.Sizes[1].Held // the sizes' verdicts, as readback sets them
	r := &view.Run{Name: "t", State: "failed", Started: t0, Ended: t0.Add(time.Minute), Cells: []*view.Cell{cell}}
	got, doc := junitOf(t, r)
	s := got.Suites[0]
	if c := caseNamed(t, s, "load sustained: profile small"); c.Failure != nil || c.Skipped != nil || c.Time != "10.000" || c.ClassName != classLoad {
		t.Errorf("held load: %+v", c)
	}
	if f := caseNamed(t, s, "load sustained: profile large").Failure; f == nil || f.Type != "unsustained" || !strings.Contains(f.Message, "600/s of the 1000/s") {
		t.Errorf("load fell short: %+v", f)
	}
	if c := caseNamed(t, s, "machine not the limit: profile small"); c.Failure != nil {
		t.Errorf("machine with room: %+v", c)
	}
	if f := caseNamed(t, s, "machine not the limit: profile large").Failure; f == nil || f.Type != "machine-bound" || !strings.Contains(f.Message, "2.0 of 2 cores") {
		t.Errorf("machine-bound: %+v", f)
	}
	for _, name := range []string{"load sustained: profile xl", "machine not the limit: profile xl"} {
		if c := caseNamed(t, s, name); c.Skipped == nil || c.Failure != nil || !strings.Contains(c.Skipped.Message, "component exited") {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if c := caseNamed(t, s, "size verified: small"); c.Failure != nil || c.ClassName != classSize {
		t.Errorf("held size: %+v", c)
	}
	if f := caseNamed(t, s, "size verified: large").Failure; f == nil || !strings.Contains(f.Message, "OOM-killed") {
		t.Errorf("size that does not hold: %+v", f)
	}
	// run completed, 3 phases × 2, 2 sizes; failing: the run, large twice, its size
	if s.Tests != 9 || s.Failures != 4 || s.Skipped != 2 {
		t.Errorf("suite: %d tests, %d failures, %d skipped; want 9, 4, 2\n%s", s.Tests, s.Failures, s.Skipped, doc)
	}
}

// TestJUnitWithoutSizes: a run with no sizes (perflab http) has its load
// judged by the same rule, from the workloads alone (readback's
// judgeHeld, here analysis.JudgeHeld), and its case says the verdict; a
// phase with none is not judged, and says so.
func TestJUnitWithoutSizes(t *testing.T) {
	for _, c := range []struct {
		rate float64
		fail bool
	}{{100, false}, {50, true}} {
		s := &analysis.Summary{Workload: analysis.Workload{Name: "http", Model: "open", TargetRate: 100}, Rate: c.rate, Requests: 1000}
		h := analysis.JudgeHeld([]analysis.PhaseData{{Summaries: []*analysis.Summary{s}}})[0]
		p := &view.Phase{Implicit: true, Workloads: []*analysis.Summary{s}, Held: &h}
		r := &view.Run{Name: "http", State: "completed", Workloads: []*analysis.Summary{s}, Cells: []*view.Cell{{Implicit: true, Phases: []*view.Phase{p}}}}
		got, _ := junitOf(t, r)
		sc := caseNamed(t, got.Suites[0], "load sustained: workload http")
		if (sc.Failure != nil) != c.fail {
			t.Errorf("rate %v of 100: %+v", c.rate, sc)
		}
	}
	s := &analysis.Summary{Workload: analysis.Workload{Name: "http", Model: "open", TargetRate: 100}, Rate: 50, Requests: 1000}
	got, _ := junitOf(t, &view.Run{Name: "http", State: "completed", Workloads: []*analysis.Summary{s}})
	if sc := caseNamed(t, got.Suites[0], "load sustained: workload http"); sc.Skipped == nil || sc.Skipped.Message != "the run has no verdict on it" {
		t.Errorf("no verdict: %+v", sc)
	}
}

// TestJUnitSearch: a search that found no rate fails its case, with each
// step's reason as the detail.
func TestJUnitSearch(t *testing.T) {
	r := &view.Run{Name: "s", State: "completed", Search: &view.Search{Start: 100, Gates: []string{"p99 < 1ms"},
		Steps: []view.SearchStep{{N: 1, Rate: 100, Why: "p99 < 1ms failed (5ms)"}}}}
	got, _ := junitOf(t, r)
	c := caseNamed(t, got.Suites[0], "search found a rate that meets the SLO")
	if c.Failure == nil || !strings.Contains(c.Failure.Detail, "step 1 at 100/s: p99 < 1ms failed") {
		t.Errorf("%+v", c)
	}
	r.Search.Sustained = 100
	got, _ = junitOf(t, r)
	if c := caseNamed(t, got.Suites[0], "search found a rate that meets the SLO"); c.Failure != nil {
		t.Errorf("found: %+v", c)
	}
}
