package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigPlan is a plan of n workloads in one profile, each with an unknown
// key ("retries") and an unknown param ("retry").
func bigPlan(n int) string {
	var b strings.Builder
	b.WriteString("name: big\nprofiles:\n  - name: p\n    duration: 10s\n    workloads:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - name: w%d\n        driver: http\n        rate: 1/s\n        retries: 3\n"+
			"        params: {url: \"http://127.0.0.1:8080/\", retry: 2}\n", i)
	}
	return b.String()
}

// loadText writes text as a plan file and loads it as perflab plan check
// does, returning the error it prints.
func loadText(t *testing.T, text string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPlan(path, "")
	return err
}

// TestLoadPlanTooLarge checks that perflab plan check of a 20,000-workload
// plan with a problem in each refuses its size first and alone, without
// follow-on problems.
func TestLoadPlanTooLarge(t *testing.T) {
	err := loadText(t, bigPlan(20_000))
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != 2 || lines[0] != "invalid plan (1 problem):" || !strings.HasSuffix(lines[1],
		"p.yaml: plan too large: 300,012 YAML nodes (20,000 workloads in 1 profile), 100,012 over the limit of 200,000; split it into several plans") {
		t.Errorf("got %d lines:\n%.3000s", len(lines), err)
	}
}

// TestLoadPlanListsBoundedProblems checks that a plan with thousands of
// problems, its own and its params', lists the first 50 and counts the
// others.
func TestLoadPlanListsBoundedProblems(t *testing.T) {
	err := loadText(t, bigPlan(5000))
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != 52 || lines[0] != "invalid plan (10000 problems):" || lines[51] != "… and 9,950 more problems" ||
		!strings.Contains(lines[2], `p.yaml:10:49: params: unknown key "retry"`) {
		t.Errorf("got %d lines:\n%.3000s", len(lines), err)
	}
}

// TestMergedParamsCheck checks that params merging an anchor (<<) pass
// plan check, block and flow style, and that a problem in the anchor is
// reported where it is written.
func TestMergedParamsCheck(t *testing.T) {
	_, errs := checkText(t, `name: merged
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: get
        driver: http
        rate: 1/s
        params: &base {url: "http://127.0.0.1:1/", headers: {Authorization: "Bearer ${TOKEN}"}}
      - {name: post, driver: http, rate: 1/s, params: {<<: *base, method: POST, body: x}}
      - name: head
        driver: http
        rate: 1/s
        params:
          <<: *base
          method: HEAD
`, nil)
	wantProblems(t, errs)
	_, errs = checkText(t, `name: merged
profiles:
  - name: a
    duration: 10s
    workloads:
      - {name: get, driver: http, rate: 1/s, params: &base {url: "ftp://x/"}}
      - {name: head, driver: http, rate: 1/s, params: {<<: *base, colour: blue}}
`, nil)
	wantProblems(t, errs, `p.yaml:6:66: params: url "ftp://x/": scheme must be http or https`,
		`p.yaml:7:67: params: unknown key "colour"`)
}
