package plan

import (
	"strings"
	"testing"
)

// TestSLO checks that gates on a profile and on a workload are kept as
// written, survive Describe, and are checked in place: every problem at the
// column of the expression where it starts.
func TestSLO(t *testing.T) {
	const text = "name: x\nprofiles:\n- name: a\n  duration: 1s\n  slo: [\"p99 < 200ms\", 'dropped == 0']\n" +
		"  workloads:\n  - {name: w, driver: d, rate: 1/s, slo: [error_rate < 0.1%, lost_samples == 0]}\n"
	p, err := ParseEnv("plan.yaml", []byte(text), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	pr := p.Profiles[0]
	if got := strings.Join(pr.SLO, "|"); got != "p99 < 200ms|dropped == 0" {
		t.Errorf("profile slo = %q", got)
	}
	if got := strings.Join(pr.Workloads[0].SLO, "|"); got != "error_rate < 0.1%|lost_samples == 0" {
		t.Errorf("workload slo = %q", got)
	}
	if pos := pr.Pos("slo.1"); pos != (Pos{Line: 5, Col: 25}) {
		t.Errorf("profile slo.1 at %+v, want 5:25 (after the quote)", pos)
	}
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"slo":["p99 \u003c 200ms","dropped == 0"]`, `"slo":["error_rate \u003c 0.1%","lost_samples == 0"]`} {
		if !strings.Contains(string(d), want) {
			t.Errorf("description lacks %s:\n%s", want, d)
		}
	}
}

func TestSLOErrors(t *testing.T) {
	head := "name: x\nprofiles:\n- name: a\n  duration: 1s\n"
	runErrorCases(t, []errorCase{
		{"threshold", head + "  workloads:\n  - name: w\n    driver: d\n    rate: 1/s\n    slo: [\"p99 < 200\", p99 <]\n", []string{
			`plan.yaml:9:18: slo "p99 < 200": p99 threshold "200": want a duration with a unit, like 200ms or 1.5s`,
			`plan.yaml:9:29: slo "p99 <": want a threshold after <`}},
		{"metric", head + "  slo:\n  - 'p99{op=\"x\" < 1s'\n  - dropped{op=\"GET\"} == 0\n  workloads: [{name: w, driver: d, rate: 1/s}]\n", []string{
			`plan.yaml:6:17: slo "p99{op=\"x\" < 1s": want , or } after the value of op`,
			`plan.yaml:7:13: slo "dropped{op=\"GET\"} == 0": dropped has no per-operation figure: scope it with workload="…" only`}},
		{"not a list", head + "  slo: p99 < 1s\n  workloads: [{name: w, driver: d, rate: 1/s}]\n", []string{
			`plan.yaml:5:8: slo: want a list of gates like ["p99 < 200ms", "error_rate < 0.1%"], got "p99 < 1s"`}},
		{"workload label", head + "  slo: ['p99{workload=\"v\"} < 1s']\n  workloads:\n  - {name: w, driver: d, rate: 1/s, slo: ['rate{workload=\"u\"} > 1']}\n", []string{
			`plan.yaml:5:10: slo "p99{workload=\"v\"} < 1s" names workload "v", which is not in profile "a" (workloads: w)`,
			`plan.yaml:7:44: slo "rate{workload=\"u\"} > 1" names workload "u", but it is a gate of workload "w": move it to the profile's slo`}},
	})
}
