package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
)

// TestResourcesNotFromDefault checks the Markdown note that names the
// components whose memory is read from another metric than RSS; the
// generator is not named.
func TestResourcesNotFromDefault(t *testing.T) {
	st := analysis.Stat{N: 20, P99: 3 << 20, Max: 4 << 20, Avg: 2 << 20}
	res := &analysis.Resources{Ticks: 20, Components: []analysis.ComponentResources{
		{Component: analysis.Component{Name: "app"}, Memory: st, MemoryMetric: "working_set_bytes"},
		{Component: analysis.Component{Name: "db"}, Memory: st, MemoryMetric: observe.RSSBytes},
		{Component: analysis.Component{Name: "gen", Kind: analysis.KindGenerator}, Memory: st, MemoryMetric: "other_bytes"},
	}}
	b := &strings.Builder{}
	markdownResources(b, res, 3)
	want := "\nNot from `" + observe.RSSBytes + "`: app from `working_set_bytes`.\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("Markdown resources lack %q:\n%s", want, b.String())
	}
}
