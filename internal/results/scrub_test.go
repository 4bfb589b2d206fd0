package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
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
	must(r.AddFacts("get", []driver.Fact{{Name: with("fact"), Value: with("value")}}))
	must(r.AddChecks("get", []driver.Check{{Name: "samples", Unit: "samples", Note: with("note")}}))
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

// TestScrubbedShardsAndStops: a worker's row keeps its profile as given,
// the key that joins it to its phase, and a component's stop is scrubbed
// like its exit text.
func TestScrubbedShardsAndStops(t *testing.T) {
	const secret = "s3cr3t-value"
	r, err := CreateScrubbed(t.TempDir(), testMeta(), strings.NewReplacer(secret, "[redacted]").Replace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	profile := "p-" + secret
	if err := r.AddPhase(Phase{Cell: 0, Profile: profile}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddShard(Shard{Cell: 0, Profile: profile, State: ShardFailed, Message: "token " + secret}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddComponent(Component{Cell: 0, Name: "c", Kind: KindRun}); err != nil {
		t.Fatal(err)
	}
	if err := r.ComponentStopped(0, "c", Stop{Time: testStart, How: "exit status 1: " + secret}); err != nil {
		t.Fatal(err)
	}
	phases, err1 := r.Phases()
	shards, err2 := r.Shards()
	comps, err3 := r.Components(0)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || len(shards) != 1 || shards[0].Profile != phases[0].Profile || shards[0].Message != "token [redacted]" {
		t.Errorf("phases %+v, shards %+v: want the worker under its phase's profile, its message scrubbed", phases, shards)
	}
	if len(comps) != 1 || comps[0].Stop == nil || comps[0].Stop.How != "exit status 1: [redacted]" {
		t.Errorf("components %+v: want the stop scrubbed", comps)
	}
}
