package results

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

func TestFactsAndChecks(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a/write", "a/read"} {
		if err := r.AddWorkload(Workload{Name: name, Driver: "remote_write", Model: ModelOpen}); err != nil {
			t.Fatal(err)
		}
	}
	facts := []driver.Fact{{Name: "rate", Value: "0.5/s from the driver"}, {Name: "active series", Value: "10000"}}
	if err := r.AddFacts("a/write", facts[:1]); err != nil {
		t.Fatal(err)
	}
	if err := r.AddFacts("a/write", facts[1:]); err != nil {
		t.Fatal(err)
	}
	checks := []driver.Check{
		{Name: "series", Expected: 10000, Found: 10000, Unit: "series", Note: "every one", State: driver.CheckLate, Late: 400, LateBy: 1500 * time.Millisecond},
		{Name: "samples", Expected: 20000, Found: 15000, Unit: "samples", Note: "5000 missing", State: driver.CheckLost},
		{Name: "exemplars", Expected: 10, Unit: "exemplars", State: driver.CheckUnverified, Reason: "HTTP 503"},
	}
	if err := r.AddChecks("a/write", checks); err != nil {
		t.Fatal(err)
	}
	if err := r.AddFacts("nope", facts); err == nil || !strings.Contains(err.Error(), `unknown workload "nope"`) {
		t.Errorf("facts of an unknown workload: %v", err)
	}
	if err := r.AddChecks("a/read", []driver.Check{{Name: "x", Expected: math.NaN()}}); err == nil {
		t.Error("a NaN check was added")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gotF, err := r.Facts()
	if err != nil || !reflect.DeepEqual(gotF, map[string][]driver.Fact{"a/write": facts}) {
		t.Errorf("Facts() = %v, %v", gotF, err)
	}
	gotC, err := r.Checks()
	if err != nil || !reflect.DeepEqual(gotC, map[string][]driver.Check{"a/write": checks}) {
		t.Errorf("Checks() = %+v, %v", gotC, err)
	}
}

// TestChecksWithoutState reads a store whose checks table has no state,
// late, late_by_ns or reason column, as perflab wrote it before it
// re-checked: the state follows lost.
func TestChecksWithoutState(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddWorkload(Workload{Name: "p/write", Driver: "remote_write", Model: ModelOpen}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Exec(`DROP TABLE checks;
		CREATE TABLE checks (workload_id INTEGER NOT NULL REFERENCES workloads (id), name TEXT NOT NULL,
			expected REAL NOT NULL, found REAL NOT NULL, unit TEXT NOT NULL, lost INTEGER NOT NULL, note TEXT NOT NULL);
		INSERT INTO checks SELECT id, 'series', 10, 10, 'series', 0, 'all' FROM workloads;
		INSERT INTO checks SELECT id, 'samples', 20, 15, 'samples', 1, '5 missing' FROM workloads`); err != nil {
		t.Fatal(err)
	}
	got, err := r.Checks()
	want := []driver.Check{{Name: "series", Expected: 10, Found: 10, Unit: "series", Note: "all", State: driver.CheckOK},
		{Name: "samples", Expected: 20, Found: 15, Unit: "samples", Note: "5 missing", State: driver.CheckLost}}
	if err != nil || !reflect.DeepEqual(got["p/write"], want) {
		t.Errorf("Checks() = %+v, %v; want %+v", got, err, want)
	}
}

// TestNoDriverTables reads a version 2 store written before the facts and
// checks tables, and a version 1 store: neither has facts or checks.
func TestNoDriverTables(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.db.Exec(`DROP TABLE facts; DROP TABLE checks`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	createV1(t, dir)
	old, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for _, run := range []*Run{r, old} {
		if fs, err := run.Facts(); err != nil || len(fs) != 0 {
			t.Errorf("Facts() = %v, %v; want none", fs, err)
		}
		if cs, err := run.Checks(); err != nil || len(cs) != 0 {
			t.Errorf("Checks() = %v, %v; want none", cs, err)
		}
	}
}
