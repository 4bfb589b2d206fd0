package cli

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// junitFile is the part of a JUnit file the tests read.
type junitFile struct {
	Suites []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Detail  string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junitFile
	if err := xml.Unmarshal(b, &j); err != nil || len(j.Suites) != 1 {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return j
}

// failed are the names of j's failing test cases with their messages.
func (j junitFile) failed() map[string]string {
	out := map[string]string{}
	for _, c := range j.Suites[0].Cases {
		if c.Failure != nil {
			out[c.Name] = c.Failure.Message
		}
	}
	return out
}

// TestCIOutputs: a plan's output: section writes its JUnit and CSV files
// beside the plan, a flag overrides one of them, --run-dir fixes the run
// directory, and --json's summary names it; the gate that failed is a
// failing case of the JUnit file, with its figure.
func TestCIOutputs(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	plan := fmt.Sprintf(`name: ci
output: {junit: ci/junit.xml, csv: ci/intervals.csv}
profiles:
  - name: only
    duration: 2s
    slo: ["p50 < 1us"]
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: %q}}
`, srv.URL+"/")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "fixed", "run")
	csvFlag := filepath.Join(dir, "flag.csv")
	code, stdout, stderr := mainOut("run", path, "--run-dir", runDir, "--csv", csvFlag, "--json")
	if code != ExitFailed || !strings.Contains(stderr, "SLO not met") {
		t.Fatalf("exit %d, want 1 (the gate fails)\n%s", code, stderr)
	}
	var sum struct{ Dir string }
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Dir != runDir {
		t.Errorf("--json's dir %q, want %q (%v)", sum.Dir, runDir, err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "summary.json")); err != nil {
		t.Errorf("--run-dir: %v", err)
	}
	failed := readJUnit(t, filepath.Join(dir, "ci", "junit.xml")).failed()
	// The load and machine checks may fail on a busy machine; the run
	// completed, and the gate failed.
	if msg, ok := failed["p50 < 1us on only/get"]; !ok || !strings.Contains(msg, "measured ") || failed["run completed"] != "" {
		t.Errorf("failing cases %q, want the gate's and not the run's", failed)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci", "intervals.csv")); err == nil {
		t.Errorf("the plan's csv was written though --csv named another file")
	}
	rows := readCSV(t, csvFlag)
	var requests int
	for _, r := range rows[1:] {
		n := 0
		fmt.Sscan(r[6], &n)
		requests += n
	}
	if rows[0][4] != "workload" || requests < 50 {
		t.Errorf("csv: %d requests in %d rows\n%q", requests, len(rows), rows)
	}
	if !strings.Contains(stderr, "junit:") || !strings.Contains(stderr, csvFlag) {
		t.Errorf("stderr does not say where the files are:\n%s", stderr)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %d rows, %v", path, len(rows), err)
	}
	return rows
}

// TestCIOutputOfARunThatNeverStarted: a run that failed before it had a
// report (its --run-dir holds another's files) still writes a JUnit file,
// whose one case fails with the reason, so that CI shows it.
func TestCIOutputOfARunThatNeverStarted(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taken, "other"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "junit.xml")
	code, _, stderr := mainOut("http", "http://127.0.0.1:1/", "--duration", "1s", "--run-dir", taken, "--junit", junit)
	if code != ExitFailed || !strings.Contains(stderr, "not empty") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	failed := readJUnit(t, junit).failed()
	if msg := failed["run completed"]; len(failed) != 1 || !strings.Contains(msg, "not empty") {
		t.Errorf("failing cases %q", failed)
	}
}

// TestCIFlagsThatContradict: --run-dir beside --out, one file for both
// outputs, and perflab size's --junit without --verify, are refused
// before anything runs.
func TestCIFlagsThatContradict(t *testing.T) {
	for _, args := range [][]string{
		{"http", "http://127.0.0.1:1/", "--run-dir", "a", "--out", "b"},
		{"http", "http://127.0.0.1:1/", "--junit", "x", "--csv", "./x"},
		{"run", "plan.yaml", "--run-dir", "a", "--out", "b"},
		{"search", "plan.yaml", "--run-dir", "a", "--out", "b"},
	} {
		if code, _, stderr := mainOut(args...); code != ExitUsage || !strings.Contains(stderr, "give ") {
			t.Errorf("%q: exit %d\n%s", args, code, stderr)
		}
	}
	if code, _, stderr := mainOut("size", "run-dir", "--junit", "x.xml"); code != ExitUsage || !strings.Contains(stderr, "--junit applies to --verify") {
		t.Errorf("size --junit without --verify: exit %d\n%s", code, stderr)
	}
}
