package results

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/stats"
)

// Tests of the edges mutation testing found untested (issue 18).

// TestCountersOfAnOpWithoutMeasures: an operation that counts (goodput)
// but records no measure keeps its counters.
func TestCountersOfAnOpWithoutMeasures(t *testing.T) {
	r := newRunT(t)
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	iv := testInterval(0)
	delete(iv.Ops, "PUT /x")
	delete(iv.Ops, "chat")
	iv.Ops["GET /"].Counters[stats.GoodputJudged], iv.Ops["GET /"].Counters[stats.Goodput] = 100, 97
	if err := r.WriteInterval("ingest", iv); err != nil {
		t.Fatal(err)
	}
	ivs, err := reopen(t, r).Intervals("ingest")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("Intervals: %v, %d intervals", err, len(ivs))
	}
	checkInterval(t, ivs[0], iv)
}

// TestPhaseWarningsInOneCall: every warning of one call is stored.
func TestPhaseWarningsInOneCall(t *testing.T) {
	r := newRunT(t)
	ws := []PhaseWarning{
		{Cell: 0, Profile: "low", Component: "tempo", Message: "no series for working_set_bytes"},
		{Cell: 0, Profile: "low", Component: "node", Message: "step 15s is more than a fifth of the window"},
	}
	if err := r.AddPhaseWarnings(ws); err != nil {
		t.Fatal(err)
	}
	if got, err := reopen(t, r).PhaseWarnings(); err != nil || !reflect.DeepEqual(got, ws) {
		t.Errorf("PhaseWarnings() = %+v, %v; want %+v", got, err, ws)
	}
}

// TestVersion2Workloads: a version 2 store's workloads keep their cell,
// profile and short name, and its samples read.
func TestVersion2Workloads(t *testing.T) {
	r := newRunT(t)
	if err := r.AddWorkload(testWorkloads[1]); err != nil {
		t.Fatal(err)
	}
	addComponents(t, r, 1, "vm")
	if err := r.WriteSamples(1, testStart, map[string][]Sample{"vm": {{"rss_bytes", 1e9}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Exec(`UPDATE meta SET value = '2' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	r2 := reopen(t, r)
	ws, err := r2.Workloads()
	if err != nil || len(ws) != 1 || ws[0].Cell != 1 || ws[0].Profile != "small" || ws[0].Short != "query" {
		t.Errorf("Workloads() = %+v, %v; want cell 1, profile small, short query", ws, err)
	}
	if got, err := r2.Samples(1); err != nil || len(got["vm"]["rss_bytes"]) != 1 {
		t.Errorf("Samples(1) = %v, %v; want the one sample", got, err)
	}
}

// TestWorkloadsWithoutPlace: a version 3 store written before the place
// keys were recorded reads as naming none.
func TestWorkloadsWithoutPlace(t *testing.T) {
	r := newRunT(t)
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Exec(`ALTER TABLE workloads DROP COLUMN place`); err != nil {
		t.Fatal(err)
	}
	ws, err := reopen(t, r).Workloads()
	if err != nil || len(ws) != 1 || ws[0].Place != nil || ws[0].Name != "ingest" {
		t.Errorf("Workloads() = %+v, %v; want ingest without place keys", ws, err)
	}
}

// TestRepeatMetaOfOne: the reader takes any whole number of 1 or more, as
// its error says, though perflab writes the key only from 2.
func TestRepeatMetaOfOne(t *testing.T) {
	r := newRunT(t)
	if _, err := r.db.Exec(`INSERT INTO meta (key, value) VALUES ('repeat', '1')`); err != nil {
		t.Fatal(err)
	}
	if m, err := reopen(t, r).Meta(); err != nil || m.Repeat != 1 {
		t.Errorf("Meta() repeat %d, %v; want 1", m.Repeat, err)
	}
}

// TestDirNameKeepsDigits: a run name's digits 0 to 9 and letters a to z
// stay in its directory name.
func TestDirNameKeepsDigits(t *testing.T) {
	if got, want := DirName("v0.9 run_z", testStart), "v0-9-run_z-20261121-172400"; got != want {
		t.Errorf("DirName = %q, want %q", got, want)
	}
}

// TestCreateTriesEverySuffix: the last free name, suffix maxSuffix, is
// taken.
func TestCreateTriesEverySuffix(t *testing.T) {
	parent := t.TempDir()
	base := DirName("demo", testStart)
	for i := 1; i < maxSuffix; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		if err := os.Mkdir(filepath.Join(parent, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Create(parent, Meta{Name: "demo", Started: testStart})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, want := filepath.Base(r.Dir()), fmt.Sprintf("%s-%d", base, maxSuffix); got != want {
		t.Errorf("dir %q, want %q", got, want)
	}
}

// TestSamplesOfManyMetricsAtOnce: a tick of more samples than one
// statement inserts keeps every one.
func TestSamplesOfManyMetricsAtOnce(t *testing.T) {
	r := newRunT(t)
	addComponents(t, r, 0, "db")
	var points []Sample
	for i := range samplesPerStmt + 10 {
		points = append(points, Sample{fmt.Sprintf("m%03d", i), float64(i)})
	}
	if err := r.WriteSamples(0, testStart, map[string][]Sample{"db": points}); err != nil {
		t.Fatal(err)
	}
	got, err := reopen(t, r).Samples(0)
	if err != nil || len(got["db"]) != samplesPerStmt+10 {
		t.Errorf("Samples: %d metrics, %v; want %d", len(got["db"]), err, samplesPerStmt+10)
	}
}

// TestSampleMessageAtItsLimit: a sample message of exactly MaxSample bytes
// is kept whole, not marked cut.
func TestSampleMessageAtItsLimit(t *testing.T) {
	s := strings.Repeat("x", MaxSample)
	if got := shorten(s); got != s {
		t.Errorf("shorten of %d bytes: %d bytes ending %q", len(s), len(got), got[len(got)-3:])
	}
}
