package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// killedRun is planRun where perflab stopped ingester-1 of the first cell
// politely and had to kill it in the second.
func killedRun() *view.Run {
	r := planRun()
	for i, c := range r.Cells {
		s := &analysis.Stop{Time: c.Ended, Grace: 10 * time.Second, How: "exited with status 0 after SIGTERM"}
		if i == 1 {
			s.Killed, s.How = true, "still running 10s after SIGTERM (its stop grace): killed with SIGKILL"
		}
		c.Components[0].Stop = s
	}
	return r
}

// TestKilledComponentWarns: a component perflab had to kill when its cell
// ended is a warning in its cell's section of report.md and report.html,
// a note of the matrix summary, and in summary.json; one it stopped
// politely is only in summary.json.
func TestKilledComponentWarns(t *testing.T) {
	r := killedRun()
	warning := "Component `ingester-1` was killed when its cell ended (17:33:00 UTC): still running 10s after SIGTERM (its stop grace): killed with SIGKILL"
	var md, page, js bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "- **Warning:** "+warning+"\n"); n != 1 {
		t.Errorf("report.md has the warning %d times, want once:\n%s", n, md.String())
	}
	if !strings.Contains(md.String(), "- **Note:** Component `ingester-1` of cell `gomemlimit=2GiB,ballast=0` was killed when the cell ended") {
		t.Error("report.md's matrix summary does not note the kill")
	}
	if strings.Contains(md.String(), "after SIGTERM\n") {
		t.Error("report.md warns about a component that stopped on SIGTERM")
	}
	r.Charts = []view.PhaseCharts{}
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if plain := strings.ReplaceAll(warning, "`", ""); !strings.Contains(page.String(), `<p class="warning">Warning: `+plain+"</p>") {
		t.Error("report.html lacks the warning")
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Cells []struct {
			Warnings   []string
			Components []struct {
				Name string
				Stop *struct {
					Time         time.Time
					GraceSeconds float64 `json:"grace_seconds"`
					Killed       bool
					How          string
				}
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	for i, c := range s.Cells {
		stop := c.Components[0].Stop
		if stop == nil || stop.Killed != (i == 1) || stop.GraceSeconds != 10 || !stop.Time.Equal(r.Cells[i].Ended) {
			t.Errorf("cell %d: %s stop = %+v", i, c.Components[0].Name, stop)
		}
		if c.Components[1].Stop != nil {
			t.Errorf("cell %d: %s has a stop it was not given", i, c.Components[1].Name)
		}
		if want := i; len(c.Warnings) != want {
			t.Errorf("cell %d: warnings %q, want %d", i, c.Warnings, want)
		}
	}
	if w := s.Cells[1].Warnings; len(w) == 1 && w[0] != strings.ReplaceAll(warning, "`", "") {
		t.Errorf("summary.json warning %q", w[0])
	}
}
