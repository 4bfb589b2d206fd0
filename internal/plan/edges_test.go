package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestNullValuesAreAbsent: a key written with no value (~, null) is as if
// it were not written, its default kept.
func TestNullValuesAreAbsent(t *testing.T) {
	p := mustParse(t, `name: x
description: ~
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, rate: 1/s, grace: null, vus: {min: ~, max: 7}}]
`)
	w := p.Profiles[0].Workloads[0]
	if p.Description != "" || w.Grace != DefaultGrace || w.VUs.Max != 7 {
		t.Errorf("description %q, grace %v, vus %+v; want none, the default %v and max 7", p.Description, w.Grace, w.VUs, DefaultGrace)
	}
}

// TestWholeNumbersAsYAMLWritesThem: a count written 1_000 or 0x10 is the
// number YAML reads.
func TestWholeNumbersAsYAMLWritesThem(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - {name: c, driver: d, concurrency: 1_000}
      - {name: o, driver: d, rate: 1/s, vus: {max: 0x10}}
`)
	ws := p.Profiles[0].Workloads
	if ws[0].Concurrency != 1000 || ws[1].VUs.Max != 16 {
		t.Errorf("concurrency %d, vus.max %d; want 1000 and 16", ws[0].Concurrency, ws[1].VUs.Max)
	}
}

// TestStartConcurrencyMakesAClosedWorkload: stages that start from a
// number of VUs are the closed model.
func TestStartConcurrencyMakesAClosedWorkload(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 2s
    workloads:
      - {name: c, driver: d, start_concurrency: 2, stages: [{duration: 2s, target: 4}]}
      - {name: o, driver: d, start_rate: 2/s, stages: [{duration: 2s, target: 4/s}]}
`)
	ws := p.Profiles[0].Workloads
	if ws[0].Model != Closed || ws[0].StartConcurrency != 2 || ws[1].Model != Open {
		t.Errorf("models %q (start %d) and %q; want closed (2) and open", ws[0].Model, ws[0].StartConcurrency, ws[1].Model)
	}
}

// TestParamsValuesAreExpandedNotKeys: references in params values are
// looked up (an unset variable is a problem) and substituted; a key is a
// name, taken as written.
func TestParamsValuesAreExpandedNotKeys(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: d
        rate: 1/s
        params: {a: "${MY_TOKEN}", "${NOT_SET}": b, c: "${MY_TOKEN}"}
`)
	var got map[string]string
	if err := p.Profiles[0].Workloads[0].Params.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": secret, "${NOT_SET}": "b", "c": secret}; !reflect.DeepEqual(got, want) {
		t.Errorf("params %v, want %v", got, want)
	}
	errs := parseErrors(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, rate: 1/s, params: {a: x, b: "${NOT_SET}"}}]
`)
	if !strings.Contains(errs, "environment variable NOT_SET is not set") {
		t.Errorf("an unset variable in the second value: %s", errs)
	}
}

// TestDescribeWritesWhatWasWritten: the stored plan leaves out what was
// not set (repeat once, an empty env) and writes rates and sizes as they
// read back: a stage ramping to 0/s, 1234.5/s per second, 1KiB/s.
func TestDescribeWritesWhatWasWritten(t *testing.T) {
	p := mustParse(t, `name: x
repeat: 1
components:
  - {name: api, run: {command: /bin/true}}
profiles:
  - name: a
    duration: 20s
    workloads:
      - {name: w, driver: d, start_rate: 1234.5/s, stages: [{duration: 10s, target: 100/s}, {duration: 10s, target: 0/s}]}
      - {name: b, driver: d, rate: 1KiB/s}
`)
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Repeat     *int `json:"repeat"`
		Components []struct {
			Run map[string]json.RawMessage `json:"run"`
		} `json:"components"`
		Profiles []struct {
			Workloads []struct {
				StartRate string `json:"start_rate"`
				Rate      string `json:"rate"`
				Stages    []struct {
					Target string `json:"target"`
				} `json:"stages"`
			} `json:"workloads"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(d, &got); err != nil {
		t.Fatal(err)
	}
	if _, env := got.Components[0].Run["env"]; got.Repeat != nil || env {
		t.Errorf("repeat %v, env written %v; want neither:\n%s", got.Repeat, env, d)
	}
	ws := got.Profiles[0].Workloads
	if ws[0].StartRate != "1234.5/s" || len(ws[0].Stages) != 2 || ws[0].Stages[0].Target != "100/s" || ws[0].Stages[1].Target != "0/s" {
		t.Errorf("start rate %q, stages %+v; want 1234.5/s, 100/s and 0/s", ws[0].StartRate, ws[0].Stages)
	}
	if ws[1].Rate != "1KiB/s" {
		t.Errorf("rate %q, want 1KiB/s", ws[1].Rate)
	}
}

// matrixPlan is a plan whose matrix has variables of the given numbers of
// values, repeated repeat times.
func matrixPlan(repeat int, sizes ...int) string {
	var b strings.Builder
	b.WriteString("name: x\nrepeat: " + strconv.Itoa(repeat) + "\nmatrix:\n")
	for i, n := range sizes {
		vals := make([]string, n)
		for j := range vals {
			vals[j] = strconv.Itoa(j)
		}
		fmt.Fprintf(&b, "  v%d: [%s]\n", i, strings.Join(vals, ", "))
	}
	return b.String() + okProfiles
}

// TestCellLimitAtItsEdge (issue 18): a matrix of MaxCells cells runs, one
// of MaxCells+1 is refused; so is a repeat that takes the run past
// MaxCells, and not one that reaches it.
func TestCellLimitAtItsEdge(t *testing.T) {
	if MaxCells != 10000 {
		t.Fatalf("MaxCells %d: the cases below are for 10000", MaxCells)
	}
	p := mustParse(t, matrixPlan(1, 100, 100))
	if n := len(p.Cells()); n != MaxCells {
		t.Errorf("a 100 × 100 matrix has %d cells, want %d", n, MaxCells)
	}
	if n := len(p.RunCells(1)); n != MaxCells {
		t.Errorf("RunCells(1) of a 100 × 100 matrix: %d cells, want %d", n, MaxCells)
	}
	if cells := p.RunCells(2); cells != nil {
		t.Errorf("RunCells(2) of a 100 × 100 matrix: %d cells, want none (more than %d)", len(cells), MaxCells)
	}
	if got := parseErrors(t, matrixPlan(1, 73, 137)); !strings.Contains(got, "the matrix has more than 10000 cells; split the plan") {
		t.Errorf("a 73 × 137 matrix (10001 cells): %s", got)
	}
	if cells := (&Plan{Matrix: []Variable{{Name: "a", Values: make([]string, 73)}, {Name: "b", Values: make([]string, 137)}}}).Cells(); cells != nil {
		t.Errorf("Cells() of 10001 cells: %d, want none", len(cells))
	}
	q := mustParse(t, matrixPlan(100, 100))
	if n := len(q.RunCells(q.Repeat)); n != MaxCells {
		t.Errorf("100 cells × repeat 100: %d cells to run, want %d", n, MaxCells)
	}
	if cells := q.RunCells(101); cells != nil {
		t.Errorf("RunCells(101) of 100 cells: %d, want none", len(cells))
	}
	if got := parseErrors(t, matrixPlan(51, 200)); !strings.Contains(got, "200 cells × repeat 51 is more than 10000 cells; split the plan") {
		t.Errorf("200 cells × repeat 51: %s", got)
	}
}

// TestDescribePrometheusWritesOnlyWhatIsSet: a prometheus section without
// basic auth, split or queries is stored without them, one with a password
// alone keeps it (as a reference), and a query named only "metric:" is
// refused.
func TestDescribePrometheusWritesOnlyWhatIsSet(t *testing.T) {
	p := mustParse(t, `name: x
components:
  - name: a
    observe: prometheus
    prometheus: {url: "http://127.0.0.1:9090", preset: self, instance: a}
  - name: b
    observe: prometheus
    prometheus:
      url: "http://127.0.0.1:9090"
      basic_auth: {password: "${MY_TOKEN}"}
      queries: {cpu_cores: x}
      split: {label: instance, regex: "(.*):9100"}
`+okProfiles)
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Components []struct {
			Prometheus map[string]json.RawMessage `json:"prometheus"`
		} `json:"components"`
	}
	if err := json.Unmarshal(d, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"basic_auth", "split", "queries"} {
		if v, ok := got.Components[0].Prometheus[key]; ok {
			t.Errorf("component a: %s written as %s", key, v)
		}
	}
	b := got.Components[1].Prometheus
	if string(b["basic_auth"]) != `{"password":"${MY_TOKEN}"}` || string(b["split"]) != `{"label":"instance","regex":"(.*):9100"}` ||
		string(b["queries"]) != `{"cpu_cores":"x"}` {
		t.Errorf("component b: basic_auth %s, split %s, queries %s", b["basic_auth"], b["split"], b["queries"])
	}
	errs := parseErrors(t, `name: x
components:
  - name: c
    observe: prometheus
    prometheus: {url: "http://127.0.0.1:9090", queries: {"metric:": up}}
`+okProfiles)
	if !strings.Contains(errs, `queries: "metric:" is not a metric perflab knows`) {
		t.Errorf("a query named metric: alone: %s", errs)
	}
}

// TestWholeReferenceTakesTheTypeOfItsValue: a params value that is one
// environment reference and nothing else is read as what the variable
// holds (a number for a port); within other text it stays text.
func TestWholeReferenceTakesTheTypeOfItsValue(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "PORT" {
			return "8080", true
		}
		return "", false
	}
	p, err := ParseEnv("plan.yaml", []byte(`name: x
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, rate: 1/s, params: {port: "${PORT}", url: "http://127.0.0.1:${PORT}/"}}]
`), env)
	if err != nil {
		t.Fatal(err)
	}
	var got driverConfig
	if err := p.Profiles[0].Workloads[0].Params.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Port != 8080 || got.URL != "http://127.0.0.1:8080/" {
		t.Errorf("port %d, url %q; want 8080 and http://127.0.0.1:8080/", got.Port, got.URL)
	}
}

// TestParamsDecodeIntoAnEmbeddedPointer: a driver's params struct may
// embed its common part by pointer; it is allocated and filled.
func TestParamsDecodeIntoAnEmbeddedPointer(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, rate: 1/s, params: {url: u, retries: 3}}]
`)
	var got struct {
		URL     string `yaml:"url"`
		*Common `yaml:",inline"`
	}
	if err := p.Profiles[0].Workloads[0].Params.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.URL != "u" || got.Common == nil || got.Retries != 3 {
		t.Errorf("decoded %+v (common %+v), want url u and retries 3", got, got.Common)
	}
}

// TestCompareFindsEachWorkloadByName: the workloads of a pair are found
// by name among others, and their loads compared.
func TestCompareFindsEachWorkloadByName(t *testing.T) {
	errs := parseErrors(t, `name: x
profiles:
  - name: small
    duration: 10s
    workloads:
      - {name: other, driver: d, rate: 5/s}
      - {name: a, driver: d, rate: 1/s}
      - {name: b, driver: d, rate: 2/s}
compare:
  - {a: a, b: b}
`)
	if want := "plan.yaml:10:15: compare: in profile small the workloads a and b differ in driver, model or load; a side-by-side comparison needs the same load"; errs != want {
		t.Errorf("got:\n%s\nwant:\n%s", errs, want)
	}
}

// TestUnterminatedReferenceEndingInSpaces is refused as malformed.
func TestUnterminatedReferenceEndingInSpaces(t *testing.T) {
	_, err := substitute("x {{ a  ", func(ref) string { return "" })
	if want := `malformed reference "{{ a  ": want {{name}}; write {{{{ for a literal {{`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestRepeatOnce: repeat 1 runs every cell once; 0 is refused.
func TestRepeatOnce(t *testing.T) {
	if p := mustParse(t, "name: x\nrepeat: 1\n"+okProfiles); p.Repeat != 1 || len(p.RunCells(p.Repeat)) != 1 {
		t.Errorf("repeat %d, %d cells to run; want 1 and 1", p.Repeat, len(p.RunCells(p.Repeat)))
	}
	if got := parseErrors(t, "name: x\nrepeat: 0\n"+okProfiles); !strings.Contains(got, "repeat 0: want 1 or more (1 runs every cell once)") {
		t.Errorf("repeat 0: %s", got)
	}
}

// TestValidateReportsEachProblemOnce: a profile without a duration is
// not also told its stages are longer than it; a closed workload given
// rate and concurrency is told once, and of what else is open-model only.
func TestValidateReportsEachProblemOnce(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"no duration", `name: x
profiles:
  - name: a
    workloads: [{name: w, driver: d, stages: [{duration: 2s, target: 1/s}]}]
`, []string{`plan.yaml:3:5: profile "a" needs a duration`}},
		{"closed with rate", `name: x
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, model: closed, rate: 1/s, concurrency: 2, vus: {max: 3}}]
`, []string{
			`plan.yaml:5:77: workload "w": give one of rate and concurrency, not both`,
			`plan.yaml:5:85: vus applies to the open model, and this workload is closed`}},
		{"ready URL", `name: x
components: [{name: c, run: {command: x, ready: {http: "ftp://x"}}}]
` + okProfiles, []string{`plan.yaml:2:56: http "ftp://x": want an http:// or https:// URL`}},
		{"matrix past the limit by a third variable", matrixPlan(1, 100, 100, 2),
			[]string{`plan.yaml:4:3: the matrix has more than 10000 cells; split the plan`}},
	})
}

// TestNamesMayUseEveryLetter: names are lower-case letters a to z,
// digits, _ and -.
func TestNamesMayUseEveryLetter(t *testing.T) {
	p := mustParse(t, "name: x\nprofiles: [{name: az09_-, duration: 1s, workloads: [{name: zz, driver: d, rate: 1/s}]}]\n")
	if p.Profiles[0].Name != "az09_-" {
		t.Errorf("profile %q", p.Profiles[0].Name)
	}
}

// TestReferenceNames: a reference names letters a to z and A to Z, _ and
// digits 0 to 9 after the first; a matrix variable must be such a name.
func TestReferenceNames(t *testing.T) {
	sub := func(r ref) string { return "<" + r.name + ">" }
	if got, err := substitute("{{z0}} ${Z_09} {{ a9 }}", sub); err != nil || got != "<z0> <Z_09> <a9>" {
		t.Errorf("substitute = %q, %v", got, err)
	}
	runErrorCases(t, []errorCase{
		{"matrix names", "name: x\nmatrix: {a-b: [1], 1v: [2], v1: [3]}\n" + okProfiles, []string{
			`plan.yaml:2:10: matrix variable "a-b": use letters, digits and _, so that {{a-b}} can name it`,
			`plan.yaml:2:20: matrix variable "1v": use letters, digits and _, so that {{1v}} can name it`}},
	})
	// A malformed reference is quoted whole up to 24 bytes, cut after.
	for in, want := range map[string]string{
		"${abcdefghijklmnopqrstuv":  `malformed reference "${abcdefghijklmnopqrstuv": want ${NAME}; write $${ for a literal ${`,
		"${abcdefghijklmnopqrstuvw": `malformed reference "${abcdefghijklmnopqrstuv…": want ${NAME}; write $${ for a literal ${`,
	} {
		if _, err := substitute(in, sub); err == nil || err.Error() != want {
			t.Errorf("substitute(%q): %v, want %s", in, err, want)
		}
	}
}

// TestTooManyNodesWithoutWorkloads: a plan too large for another reason
// than its workloads says so without counting workloads.
func TestTooManyNodesWithoutWorkloads(t *testing.T) {
	text := "name: x\ncomponents: [{name: c, run: {command: x, args: [" + strings.TrimSuffix(strings.Repeat("x,", MaxNodes), ",") +
		"]}}]\nprofiles: [{name: a, duration: 1s}]\n"
	onlyProblem(t, []byte(text), "plan.yaml: plan too large: 200,021 YAML nodes, 21 over the limit of 200,000; split it into several plans")
}

// TestDescribeWritesParamsAndHeadersOnlyWhenSet (issue 18): a workload's
// params and an export's headers are described when the plan has them,
// and left out, not written empty, when it has none.
func TestDescribeWritesParamsAndHeadersOnlyWhenSet(t *testing.T) {
	p := mustParse(t, `name: x
export:
  - {kind: otlp, url: "grpc://127.0.0.1:4317"}
profiles:
  - name: a
    duration: 1s
    workloads:
      - {name: w, driver: d, rate: 1/s, params: {path: /x}}
      - {name: v, driver: d, rate: 1/s}
`)
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	s := string(d)
	if !strings.Contains(s, `"export":[{"kind":"otlp","url":"grpc://127.0.0.1:4317"}]`) || strings.Count(s, `"params"`) != 1 || !strings.Contains(s, `"params":{"path":"/x"}`) {
		t.Errorf("described %s", d)
	}
}

// TestParamsCutTheFirstKey (issue 18): the first key of params is cut like
// any other.
func TestParamsCutTheFirstKey(t *testing.T) {
	p := mustParse(t, cutPlan)
	params := p.Profiles[0].Workloads[0].Params
	if rest, _, found := params.Cut("url"); !found || rest.Has("url") || !rest.Has("method") {
		t.Errorf("Cut(url): found %v, rest has url %v", found, rest.Has("url"))
	}
}

// TestCellLimitReachedBeforeTheLastVariable (issue 18): a matrix that
// reaches MaxCells exactly and then has one more variable is refused.
func TestCellLimitReachedBeforeTheLastVariable(t *testing.T) {
	if got := parseErrors(t, matrixPlan(1, 100, 100, 2)); !strings.Contains(got, "the matrix has more than 10000 cells; split the plan") {
		t.Errorf("a 100 × 100 × 2 matrix: %s", got)
	}
}
