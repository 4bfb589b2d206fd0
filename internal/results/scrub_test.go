package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// TestCreateScrubbed: a secret in any text handed to a scrubbed run —
// meta, workload target and params, error samples and operation names,
// events, facts, checks, cells, phases, components, the status — is not in
// any file of the run directory, and what was scrubbed reads back scrubbed.
func TestCreateScrubbed(t *testing.T) {
	const secret = "s3cr3t-value"
	with := func(s string) string { return s + " " + secret }
	scrub := strings.NewReplacer(secret, "[redacted]").Replace
	meta := testMeta()
	meta.Command, meta.Extra = with("perflab run"), map[string]string{"plan": with("plan")}
	r, err := CreateScrubbed(t.TempDir(), meta, scrub)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := Workload{Name: "get", Driver: "http", Model: ModelOpen, Target: with("GET"), Duration: time.Second,
		Params: json.RawMessage(`{"url": "` + with("http://x/") + `"}`)}
	iv := testInterval(0)
	iv.Ops["GET /"].Samples[stats.Timeout] = with("bad token")
	iv.Ops[with("GET /")] = iv.Ops["PUT /x"]
	delete(iv.Ops, "PUT /x")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.AddWorkload(w))
	must(r.WriteInterval("get", iv))
	must(r.AddEvent(Event{Kind: "note", Message: with("event")}))
	must(r.AddFacts("get", []Fact{{Name: with("fact"), Value: with("value")}}))
	must(r.AddChecks("get", []Check{{Name: "samples", Unit: "samples", Note: with("note")}}))
	must(r.AddCell(Cell{Index: 0, Name: with("cell"), Vars: []Var{{Name: "v", Value: with("var")}}}))
	must(r.AddPhase(Phase{Cell: 0, Profile: "p", WindowRule: with("rule"), Message: with("phase")}))
	must(r.AddPhaseWarnings([]PhaseWarning{{Cell: 0, Profile: "p", Component: "c", Message: with("warning")}}))
	must(r.EndPhase(Phase{Cell: 0, Profile: "p", State: StateFailed, WindowRule: with("rule"), Message: with("phase")}))
	must(r.AddComponent(Component{Cell: 0, Name: "c", Kind: KindRun, MetricsURL: with("http://m/"), DataDirs: []string{with("/d")}}))
	must(r.ComponentExited(0, "c", time.Now(), with("exited")))
	must(r.EndCell(0, StateFailed, with("cell failed"), time.Now()))
	must(r.EndWorkload("get", WorkloadEnd{Start: testStart, WindowRule: with("window")}))
	must(r.Finish(Status{State: StateFailed, Message: with("status"), ExitCode: 1}))
	entries, err := os.ReadDir(r.Dir())
	if err != nil || len(entries) == 0 {
		t.Fatalf("%v, %d files", err, len(entries))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(r.Dir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", e.Name())
		}
	}
	ivs, err := r.Intervals("get")
	if err != nil || len(ivs) != 1 || ivs[0].Ops["GET /"].Samples[stats.Timeout] != "bad token [redacted]" || ivs[0].Ops["GET / [redacted]"] == nil {
		t.Errorf("intervals read back: %v %+v", err, ivs)
	}
}
