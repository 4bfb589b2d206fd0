package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/view"
)

// workersRun is planRun made by three workers: one client-bound, one
// lost.
func workersRun() *view.Run {
	r := planRun()
	r.Cells[0].Phases[0].Workers = []view.Worker{
		{Index: 0, Host: "node-a", State: "completed", Requests: 3000, Rate: 100, HasCPU: true, CPUP99: 0.31, Cores: 2, LagP99: 90 * time.Microsecond},
		{Index: 1, Host: "node-b", State: "completed", Requests: 2990, Rate: 99.67, HasCPU: true, CPUP99: 1.93, Cores: 2,
			LagP99: 7 * time.Millisecond, ClientBound: true, ClientWhy: "its CPU p99 was 1.93 of the 2 cores it could use (≥ 90 %)"},
		{Index: 2, Host: "node-c", State: "lost", Message: "never wrote its end (4/4/2 parts read)", Requests: 1200, Rate: 40},
	}
	return r
}

func TestWorkersTable(t *testing.T) {
	r := workersRun()
	var md, page, term, js bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 | node-b | completed | 2990 | 99.7/s | 1.93 | 2.00 | 7.00 ms | **yes**: its CPU p99 was 1.93 of the 2 cores it could use (≥ 90 %) |",
		"| 2 | node-c | lost | 1200 | 40/s | – | – | – | no |",
		"worker 2 (node-c) lost: never wrote its end (4/4/2 parts read)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	r.Charts = []view.PhaseCharts{}
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	have := htmlUnits(t, page.Bytes())
	for _, u := range markdownUnits(md.String()) {
		if strings.Contains(u, "node-") && !have[u] {
			t.Errorf("the page lacks the Markdown's %s", u)
		}
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workers of profile", "warning: client-bound: worker 1 (node-b): its CPU p99", "warning: worker 2 (node-c) lost"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("the terminal summary lacks %q:\n%s", want, term.String())
		}
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cells []struct {
			Phases []struct {
				Workers []jsonWorker `json:"workers"`
			} `json:"phases"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	ws := got.Cells[0].Phases[0].Workers
	if len(ws) != 3 || !ws[1].ClientBound || ws[2].CPUP99 != nil || *ws[1].LagP99Ms != 7 {
		t.Errorf("summary.json workers: %+v", ws)
	}
}
