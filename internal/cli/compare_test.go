package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/results/resultstest"
)

type compareOut struct {
	Forced bool `json:"forced"`
	Groups []struct {
		Name        string `json:"name"`
		Comparisons []struct {
			Subject, What, Phrase, Significance string
			Ratio, Low, High                    *float64
		} `json:"comparisons"`
	} `json:"groups"`
}

func TestCompareSyntheticRuns(t *testing.T) {
	a := writeScaledStore(t, t.TempDir(), 1, 1)
	b := writeScaledStore(t, t.TempDir(), 2, 1)
	code, out, errs := mainOut("compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c compareOut
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	// Three profiles; in each, app's CPU doubles, its memory and the workload's rate and latency do not change.
	if len(c.Groups) != 3 || c.Groups[0].Name != "Profile `s`" {
		t.Fatalf("groups %+v", c.Groups)
	}
	got := map[string]string{}
	for _, x := range c.Groups[0].Comparisons {
		got[x.Subject+" "+x.What] = x.Phrase
	}
	want := map[string]string{"app CPU": "x2.0 more CPU", "app memory": "~", "workload get request rate": "~",
		"workload get p50 latency": "~", "workload get p99 latency": "~"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	code, out, _ = mainOut("compare", a, b)
	if code != 0 || !strings.Contains(out, "| app | CPU | 0.20 cores | 0.40 cores | 2.00 | 2.00–2.00 | B uses x2.0 more CPU |") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// Repeated runs per side: Fieller's interval of the runs' means.
	code, out, errs = mainOut("compare", "--a", a, "--a", a, "--b", b, "--b", b)
	if code != 0 || !strings.Contains(out, "Fieller") || !strings.Contains(out, "B uses x2.0 more CPU") {
		t.Errorf("repeated runs: exit %d: %s\n%s", code, errs, out)
	}
}

func TestCompareRefusesDifferentWorkloads(t *testing.T) {
	a := writeScaledStore(t, t.TempDir(), 1, 1)
	b := writeScaledStore(t, t.TempDir(), 1, 2)
	code, _, errs := mainOut("compare", a, b)
	if code != ExitUsage || !strings.Contains(errs, "the workloads differ") ||
		!strings.Contains(errs, "workload default/s/get: target rate (/s) 100 in "+a+", 200 in "+b) || !strings.Contains(errs, "--force") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, out, errs := mainOut("compare", a, b, "--force")
	if code != 0 || !strings.Contains(out, "Compared with --force although the workloads differ") {
		t.Errorf("--force: exit %d: %s\n%s", code, errs, out)
	}
	code, _, errs = mainOut("compare", a)
	if code != ExitUsage || !strings.Contains(errs, "needs two run directories or more, got 1") {
		t.Errorf("one run: exit %d: %s", code, errs)
	}
	code, _, errs = mainOut("compare", a, b, "--a", a, "--format", "yaml")
	if code != ExitUsage || !strings.Contains(errs, "not both") || !strings.Contains(errs, "--a and --b each need") || !strings.Contains(errs, `--format "yaml"`) {
		t.Errorf("mixed: exit %d: %s", code, errs)
	}
	// No workload in common.
	code, _, errs = mainOut("compare", a, resultstest.WritePlanRun(t, t.TempDir()))
	if code != ExitUsage || !strings.Contains(errs, "no workload has the same name in both") {
		t.Errorf("nothing in common: exit %d: %s", code, errs)
	}
}
