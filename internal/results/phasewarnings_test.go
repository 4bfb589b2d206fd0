package results

import (
	"reflect"
	"testing"
)

func TestPhaseWarnings(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	ws := []PhaseWarning{
		{Cell: 0, Profile: "low", Component: "tempo", Message: "no series for working_set_bytes"},
		{Cell: 1, Profile: "high", Component: "node", Message: "step 15s is more than a fifth of the window"},
	}
	if err := r.AddPhaseWarnings(ws[:1]); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPhaseWarnings(ws[1:]); err != nil {
		t.Fatal(err)
	}
	if err := r.AddComponent(Component{Name: "tempo-ingester", Kind: KindPrometheus}); err != nil {
		t.Errorf("a component of kind %s: %v", KindPrometheus, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.PhaseWarnings()
	if err != nil || !reflect.DeepEqual(got, ws) {
		t.Errorf("PhaseWarnings() = %+v, %v; want %+v", got, err, ws)
	}
}

// TestNoPhaseWarningsTable reads a store written before the table.
func TestNoPhaseWarningsTable(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.db.Exec(`DROP TABLE phase_warnings`); err != nil {
		t.Fatal(err)
	}
	if ws, err := r.PhaseWarnings(); err != nil || len(ws) != 0 {
		t.Errorf("PhaseWarnings() = %v, %v; want none", ws, err)
	}
}
