package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigPlan is a plan of n workloads in one profile, each with an unknown
// key ("retries") and an unknown param ("retry").
func bigPlan(n int) []byte {
	var b strings.Builder
	b.WriteString("name: big\nprofiles:\n  - name: p\n    duration: 10s\n    workloads:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - name: w%d\n        driver: http\n        rate: 1/s\n        retries: 3\n"+
			"        params: {url: \"http://127.0.0.1:8080/\", retry: 2}\n", i)
	}
	return []byte(b.String())
}

// onlyProblem parses data and checks that it is refused with want alone
// and no plan.
func onlyProblem(t *testing.T, data []byte, want string) {
	t.Helper()
	p, err := ParsePartial("plan.yaml", data, testEnv)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %T %v, want Errors", err, err)
	}
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %d problems:\n%.2000s\nwant only:\n%s", len(errs), err, want)
	}
	if p != nil {
		t.Errorf("a plan refused for its size came with a decoded plan")
	}
}

// TestTooManyNodesFirst checks that a plan over MaxNodes is refused with
// that reason alone, saying by how much and what makes it large, without
// blaming aliases it does not have.
func TestTooManyNodesFirst(t *testing.T) {
	onlyProblem(t, bigPlan(20_000), "plan.yaml: plan too large: 300,012 YAML nodes (20,000 workloads in 1 profile), "+
		"100,012 over the limit of 200,000; split it into several plans")
}

// TestAliasesTooLarge checks the refusals of aliases that expand a small
// plan too far or forever.
func TestAliasesTooLarge(t *testing.T) {
	text := "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, params: {" +
		"a: &a [x,x,x,x,x,x,x,x,x,x], b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a], c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b], " +
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c], e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d], f: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]}}]}]\n"
	onlyProblem(t, []byte(text), "plan.yaml: plan too large: its aliases expand its 93 YAML nodes to 1,234,593, "+
		"1,034,593 over the limit of 200,000; use fewer aliases or split the plan")

	var b strings.Builder
	b.WriteString("name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, params: {a0: &a0 [x, x]")
	for i := 1; i <= 45; i++ {
		fmt.Fprintf(&b, ", a%d: &a%d [*a%d, *a%d]", i, i, i-1, i-1)
	}
	b.WriteString("}}]}]\n")
	onlyProblem(t, []byte(b.String()), "plan.yaml: plan too large: its aliases expand its 205 YAML nodes to more than "+
		"1,000,000,000,000, over the limit of 200,000; use fewer aliases")

	onlyProblem(t, []byte("name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s,\n"+
		"  params: &p {self: *p}}]}]\n"),
		"plan.yaml:3:21: alias *p sits inside its own anchor &p (line 3): it would expand forever")
	onlyProblem(t, []byte("name: x\nbase: &b\n  <<: *b\n"+okProfiles),
		"plan.yaml:3:7: alias *b sits inside its own anchor &b (line 2): it would expand forever")
}

// TestTooManyBytes checks that a plan file over MaxBytes is refused
// unread, saying by how much.
func TestTooManyBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxBytes + 1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = LoadPartial(path)
	want := path + ": plan too large: 16,778,216 bytes, 1,000 over the limit of 16,777,216 (16 MiB); split it into several plans"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	onlyProblem(t, make([]byte, MaxBytes+1),
		"plan.yaml: plan too large: 16,777,217 bytes, 1 over the limit of 16,777,216 (16 MiB); split it into several plans")
}

// TestProblemsListBounded checks that a plan with thousands of problems
// lists the first MaxListed and counts the others, while Errors holds
// them all.
func TestProblemsListBounded(t *testing.T) {
	_, err := ParsePartial("plan.yaml", bigPlan(1000), testEnv)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1000 {
		t.Fatalf("got %d problems, want 1000", len(errs))
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxListed+1 || lines[MaxListed] != "… and 950 more problems" ||
		!strings.HasPrefix(lines[0], `plan.yaml:9:9: workload: unknown key "retries"`) {
		t.Errorf("got %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	more := make([]error, MaxListed+1)
	for i := range more {
		more[i] = errors.New("x")
	}
	if got := List(more); !strings.HasSuffix(got, "\nx\n… and 1 more problem") || strings.Count(got, "\n") != MaxListed {
		t.Errorf("List of %d:\n%s", len(more), got)
	}
	if got := count(1234567); got != "1,234,567" {
		t.Errorf("count = %s", got)
	}
}
