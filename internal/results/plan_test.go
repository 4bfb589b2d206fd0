package results

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func newRunT(t *testing.T) *Run {
	t.Helper()
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// reopen closes r and opens its directory again, so reads come from the
// file, not from anything cached in r.
func reopen(t *testing.T, r *Run) *Run {
	t.Helper()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	return r2
}

func TestCellsRoundTrip(t *testing.T) {
	r := newRunT(t)
	cells := []Cell{
		{Index: 0, Name: "gomemlimit=off,ballast=0", Vars: []Var{{"gomemlimit", "off"}, {"ballast", "0"}}, Started: testStart},
		{Index: 1, Name: "gomemlimit=2GiB,ballast=0", Vars: []Var{{"gomemlimit", "2GiB"}, {"ballast", "0"}}, Started: testStart.Add(time.Minute)},
		{Index: 2, Name: "no vars", Started: testStart.Add(2 * time.Minute)},
	}
	for _, c := range cells {
		if err := r.AddCell(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.EndCell(0, StateCompleted, "", testStart.Add(50*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := r.EndCell(1, StateFailed, "component ingester exited: exit status 2", testStart.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := reopen(t, r).Cells()
	if err != nil {
		t.Fatal(err)
	}
	want := cells
	want[0].State, want[0].Ended = StateCompleted, testStart.Add(50*time.Second)
	want[1].State, want[1].Ended = StateFailed, testStart.Add(90*time.Second)
	want[1].Message = "component ingester exited: exit status 2"
	want[2].State = StateRunning // never ended: its process was killed
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCellErrors(t *testing.T) {
	r := newRunT(t)
	if err := r.AddCell(Cell{Index: 0, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"duplicate index", r.AddCell(Cell{Index: 0, Name: "b"})},
		{"negative index", r.AddCell(Cell{Index: -1})},
		{"unknown state", r.AddCell(Cell{Index: 1, State: "done"})},
		{"end of an unknown cell", r.EndCell(7, StateCompleted, "", time.Time{})},
		{"end as running", r.EndCell(0, StateRunning, "", time.Time{})},
	} {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		} else if !strings.HasPrefix(tt.err.Error(), "cannot ") {
			t.Errorf("%s: error %q does not start with \"cannot \"", tt.name, tt.err)
		}
	}
}

func TestPhasesRoundTrip(t *testing.T) {
	r := newRunT(t)
	t0 := testStart
	small := Phase{Cell: 0, Profile: "small", Start: t0, Warmup: 10 * time.Second}
	medium := Phase{Cell: 0, Profile: "medium", Start: t0.Add(time.Minute), Warmup: 5 * time.Second}
	other := Phase{Cell: 1, Profile: "small", Start: t0.Add(2 * time.Minute)}
	for _, p := range []Phase{small, medium, other} {
		if err := r.AddPhase(p); err != nil {
			t.Fatal(err)
		}
	}
	small.LoadEnd, small.WindowStart, small.WindowEnd = t0.Add(50*time.Second), t0.Add(10*time.Second), t0.Add(50*time.Second)
	small.WindowRule, small.State = "warm-up of 10s set by the plan, to the end of load", StateCompleted
	if err := r.EndPhase(small); err != nil {
		t.Fatal(err)
	}
	medium.State, medium.Message = StateInterrupted, "stopped by a signal"
	medium.LoadEnd = t0.Add(70 * time.Second)
	if err := r.EndPhase(medium); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPhase(Phase{Cell: 0, Profile: "small"}); err == nil {
		t.Error("AddPhase accepted the same cell and profile twice")
	}
	if err := r.EndPhase(Phase{Cell: 3, Profile: "small", State: StateCompleted}); err == nil {
		t.Error("EndPhase accepted an unknown phase")
	}
	got, err := reopen(t, r).Phases()
	if err != nil {
		t.Fatal(err)
	}
	other.State = StateRunning
	if want := []Phase{small, medium, other}; !reflect.DeepEqual(got, want) {
		t.Errorf("phases =\n%+v\nwant\n%+v", got, want)
	}
}

func TestComponentsRoundTrip(t *testing.T) {
	r := newRunT(t)
	comps := []Component{
		{Cell: 0, Name: "ingester-1", Group: "ingester", Kind: KindRun, PID: 4242, MetricsURL: "http://127.0.0.1:3200/metrics",
			DataDirs: []string{"/var/tempo/wal", "/var/tempo/blocks"}},
		{Cell: 0, Name: "perflab", Kind: KindGenerator, PID: 1},
		{Cell: 1, Name: "ingester-1", Group: "ingester", Kind: KindAttach},
	}
	for _, c := range comps {
		if err := r.AddComponent(c); err != nil {
			t.Fatal(err)
		}
	}
	at := testStart.Add(42 * time.Second)
	if err := r.ComponentExited(0, "ingester-1", at, "exit status 2"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Component{{Cell: 0, Name: "perflab", Kind: KindRun}, {Name: "", Kind: KindRun},
		{Name: "x", Kind: "docker"}, {Cell: -1, Name: "x", Kind: KindRun}} {
		if err := r.AddComponent(c); err == nil {
			t.Errorf("AddComponent(%+v) succeeded", c)
		}
	}
	if err := r.ComponentExited(2, "ingester-1", at, ""); err == nil {
		t.Error("ComponentExited accepted an unknown component")
	}
	// data_dirs is NULL for a component without any, as the format says
	// (docs/format/results.md), not the JSON null (issue 18)
	var nulls int
	if err := r.db.QueryRow(`SELECT count(*) FROM components WHERE data_dirs IS NULL`).Scan(&nulls); err != nil || nulls != 2 {
		t.Errorf("%d components with a NULL data_dirs, %v; want the 2 without any", nulls, err)
	}
	r2 := reopen(t, r)
	comps[0].Exited, comps[0].ExitText = at, "exit status 2"
	for cell, want := range map[int][]Component{0: comps[:2], 1: comps[2:], 5: nil} {
		got, err := r2.Components(cell)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Components(%d) =\n%+v\nwant\n%+v", cell, got, want)
		}
	}
}

// TestRepeatMeta: a repeated run stores its repetitions in the meta key
// repeat; a run that ran once has no such key and reads 0, as every store
// written before the key existed does; a key that is not a count is an
// error, not a silent 0.
func TestRepeatMeta(t *testing.T) {
	for _, tc := range []struct{ repeat, want int }{{3, 3}, {1, 0}, {0, 0}} {
		m := testMeta()
		m.Repeat = tc.repeat
		r, err := Create(t.TempDir(), m)
		if err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := r.db.QueryRow(`SELECT count(*) FROM meta WHERE key = 'repeat'`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		got, err := reopen(t, r).Meta()
		if err != nil || got.Repeat != tc.want || rows != min(tc.want, 1) {
			t.Errorf("Repeat %d: read %d (%d rows), %v; want %d", tc.repeat, got.Repeat, rows, err, tc.want)
		}
	}
	r := newRunT(t)
	if _, err := r.db.Exec(`INSERT INTO meta (key, value) VALUES ('repeat', 'twice')`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Meta(); err == nil || !strings.Contains(err.Error(), `invalid repeat "twice"`) {
		t.Errorf("a repeat key of twice: %v", err)
	}
}
