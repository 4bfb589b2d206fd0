package results

import (
	"reflect"
	"testing"
	"time"
)

// TestComponentStops records how two components were stopped, in two
// cells, and reads them back after a reopen; a store without the
// component_stops table reads as having no stops.
func TestComponentStops(t *testing.T) {
	r := newRunT(t)
	addComponents(t, r, 0, "db", "api")
	addComponents(t, r, 1, "db")
	killed := Stop{Time: testStart.Add(time.Minute).UTC(), Grace: 2 * time.Second, Killed: true,
		How: "still running 2s after SIGTERM (its stop grace): killed with SIGKILL"}
	polite := Stop{Time: testStart.Add(2 * time.Minute).UTC(), Grace: 10 * time.Second, How: "exited with status 0 after SIGTERM"}
	for _, s := range []struct {
		cell int
		name string
		stop Stop
	}{{0, "db", polite}, {0, "db", killed}, {1, "db", polite}} { // the second replaces the first
		if err := r.ComponentStopped(s.cell, s.name, s.stop); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ComponentStopped(0, "nope", polite); err == nil {
		t.Error("ComponentStopped of an unknown component succeeded")
	}
	r2 := reopen(t, r)
	want := map[int]map[string]*Stop{0: {"db": &killed, "api": nil}, 1: {"db": &polite}}
	for cell, w := range want {
		comps, err := r2.Components(cell)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*Stop{}
		for _, c := range comps {
			got[c.Name] = c.Stop
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("cell %d: stops %v, want %v", cell, got, w)
		}
	}
	if _, err := r2.db.Exec(`DROP TABLE component_stops`); err != nil {
		t.Fatal(err)
	}
	comps, err := r2.Components(0)
	if err != nil || len(comps) != 2 || comps[0].Stop != nil {
		t.Errorf("without the table: %v, %+v", err, comps)
	}
}
