package readback

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// TestCompareStagesByTheirSchedule: the same ramp stored in the two forms
// of docs/format/results.md is no difference; another start is one, told
// in words.
func TestCompareStagesByTheirSchedule(t *testing.T) {
	loaded := func(dir, stages string) *Compared {
		w := results.Workload{Name: "get", Driver: "http", Model: results.ModelOpen, Stages: json.RawMessage(stages)}
		return &Compared{dir: dir, run: &view.Run{Workloads: []*analysis.Summary{{Workload: analysis.Workload{Name: "get"}}}},
			defs: map[string]results.Workload{"get": w}, base: map[string]string{"get": "get"}}
	}
	old := loaded("a", `[{"duration":30000000000,"target":200}]`)
	same := loaded("b", `{"start":0,"stages":[{"duration":30000000000,"target":200}]}`)
	other := loaded("c", `{"start":10,"stages":[{"duration":30000000000,"target":200}]}`)
	if diffs, _ := workloadDifferences("get", old, same); len(diffs) != 0 {
		t.Errorf("the same schedule differs: %q", diffs)
	}
	diffs, _ := workloadDifferences("get", old, other)
	if want := "workload get: stages ramp 0 → 200/s over 30 s in a, ramp 10 → 200/s over 30 s in c"; len(diffs) != 1 || diffs[0] != want {
		t.Errorf("differences %q, want %q", diffs, want)
	}
}

// TestComparePlaceKeysAsRecorded: a param either run recorded as a place
// key (where the system is) is a note, another param a difference; a run
// made before place keys were recorded counts every param as the load,
// unless the other run names the key.
func TestComparePlaceKeysAsRecorded(t *testing.T) {
	loaded := func(dir, url string, place []string) *Compared {
		w := results.Workload{Name: "get", Driver: "http", Model: results.ModelOpen, Place: place,
			Params: json.RawMessage(`{"url": "` + url + `", "method": "GET"}`)}
		return &Compared{dir: dir, run: &view.Run{Workloads: []*analysis.Summary{{Workload: analysis.Workload{Name: "get"}}}},
			defs: map[string]results.Workload{"get": w}, base: map[string]string{"get": "get"}}
	}
	a, b := loaded("a", "http://a/", []string{"url"}), loaded("b", "http://b/", []string{"url"})
	if diffs, notes := workloadDifferences("get", a, b); len(diffs) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "param url") {
		t.Errorf("recorded: differences %q, notes %q", diffs, notes)
	}
	oldA, oldB := loaded("a", "http://a/", nil), loaded("b", "http://b/", nil)
	if diffs, _ := workloadDifferences("get", oldA, b); len(diffs) != 0 {
		t.Errorf("one run recorded url a place: differences %q", diffs)
	}
	if diffs, notes := workloadDifferences("get", oldA, oldB); len(diffs) != 1 || len(notes) != 0 {
		t.Errorf("neither recorded: differences %q, notes %q", diffs, notes)
	}
}

// TestCompareHTTPRunsAcrossTheirParamsForms: a perflab http run made
// before the command ran its flags as a plan (no url, a body_bytes and
// always headers in its params) compares with one made after without a
// difference in load; its url, unknown, is a note.
func TestCompareHTTPRunsAcrossTheirParamsForms(t *testing.T) {
	loaded := func(dir, params string) *Compared {
		w := results.Workload{Name: "http", Driver: "http", Model: results.ModelOpen, Rate: 50, Params: json.RawMessage(params)}
		if dir == "b" { // made after place keys were recorded
			w.Place = []string{"url"}
		}
		return &Compared{dir: dir, run: &view.Run{Workloads: []*analysis.Summary{{Workload: analysis.Workload{Name: "http"}}}},
			defs: map[string]results.Workload{"http": w}, base: map[string]string{"http": "http"}}
	}
	before := loaded("a", `{"body_bytes":0,"expect_status":"200-399","follow_redirects":0,"headers":{},"method":"GET","proto":"auto","timeout":"10s"}`)
	after := loaded("b", `{"expect_status":"200-399","follow_redirects":0,"method":"GET","proto":"auto","timeout":"10s","url":"http://127.0.0.1:1/"}`)
	if diffs, notes := workloadDifferences("http", before, after); len(diffs) != 0 || len(notes) != 1 {
		t.Errorf("differences %q, notes %q; want none and the url", diffs, notes)
	}
	withBody := loaded("c", `{"body":"x","expect_status":"200-399","follow_redirects":0,"method":"POST","proto":"auto","timeout":"10s"}`)
	if diffs, _ := workloadDifferences("http", before, withBody); len(diffs) != 2 {
		t.Errorf("a body and a method told apart from none: %q", diffs)
	}
}

// A side whose workload was client-bound is named in a warning: its rate
// and latency may be the generator's limit, so a difference says nothing
// of the systems.
func TestCompareWarnsOfAClientBoundSide(t *testing.T) {
	ref := func(dir string, bound bool) []phaseRef {
		sum := &analysis.Summary{Workload: analysis.Workload{Name: "w"}, ClientBound: bound}
		if bound {
			sum.ClientWhy = "generator CPU P99 1.9 of 2 cores (≥ 90 %)"
		}
		return []phaseRef{{run: &Compared{dir: dir}, sum: sum}}
	}
	cs := compareWorkload("workload w", ref("runs/a", false), ref("runs/b", true))
	var all []string
	for _, c := range cs {
		all = append(all, c.Ratio.Warnings...)
	}
	text := strings.Join(all, "\n")
	if strings.Count(text, "client-bound") != 1 || !strings.Contains(text, "B (runs/b) was client-bound: generator CPU P99 1.9 of 2 cores") {
		t.Errorf("warnings:\n%s", text)
	}
}
