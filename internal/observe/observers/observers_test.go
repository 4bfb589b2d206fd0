package observers

import (
	"testing"

	"github.com/perflab/perflab/internal/observe"
)

// TestMetrics: every declared metric has a name of its own, a title, and
// a label when it is a Level (its column head is made of it); comparison
// words are unique and not those of CPU or memory.
func TestMetrics(t *testing.T) {
	names, words := map[string]bool{}, map[string]bool{"CPU": true, "memory": true}
	for _, m := range Metrics() {
		if m.Name == "" || names[m.Name] || m.Title == "" || m.Kind == observe.Level && m.Label == "" {
			t.Errorf("metric %+v: no name, a name declared twice, no title, or a Level without a label", m)
		}
		if m.Compare != "" && (words[m.Compare] || m.Kind == observe.Counter) {
			t.Errorf("metric %s: comparison word %q taken, or a counter compared", m.Name, m.Compare)
		}
		names[m.Name], words[m.Compare] = true, m.Compare != ""
	}
	if !names[observe.DiskBytes] {
		t.Errorf("%s is not declared", observe.DiskBytes)
	}
}

// TestSources: a component gets a source of each observer that finds
// something of it to sample, here the disk observer's of its data
// directories.
func TestSources(t *testing.T) {
	if got := Sources(observe.Component{Name: "a", PID: 1}); len(got) != 0 {
		t.Errorf("%d sources of a component with nothing to observe", len(got))
	}
	if got := Sources(observe.Component{Name: "a", PID: 1, DataDirs: []string{t.TempDir()}}); len(got) != 1 {
		t.Errorf("%d sources of a component with a data directory, want 1", len(got))
	}
}
