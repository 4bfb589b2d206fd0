package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// heldRun is the sizes run with small machine-bound and medium
// unsustained (pico held).
func heldRun() *view.Run {
	r := sizesRun()
	in := r.Cells[0].Insights
	in.Sizes[1].Held.MachineBound = "generator 0.55 + ingester 1.45 = 2.00 of 2 cores (≥ 90 %)"
	in.Sizes[2].Held.Unsustained = []string{"workload push achieved 271/s of the 333/s asked (18.6 % short)"}
	return r
}

// TestHeldMarks: every place a size appears marks the sizes the system
// did not hold (medium) or the machine bounded (small), saying why, and
// leaves pico, which it held, unmarked.
func TestHeldMarks(t *testing.T) {
	r := heldRun()
	var term, md, html, js bytes.Buffer
	for _, f := range []func() error{func() error { return Terminal(&term, r) }, func() error { return Markdown(&md, r) },
		func() error { return HTML(&html, r) }, func() error { return JSON(&js, r) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		where, out string
		want       []string
	}{
		{"terminal", term.String(), []string{"medium (unsustained)        ingester", "small (machine-bound)        ingester",
			"scaling (P99 against the requests/s of push; left out: small (machine-bound), medium (unsustained)):",
			"warning: size medium is unsustained: the system did not hold its load: workload push achieved 271/s of the 333/s asked (18.6 % short); its figures are of a system past its capacity",
			"warning: size small is machine-bound: generator 0.55 + ingester 1.45 = 2.00 of 2 cores (≥ 90 %); the generator and the components it started shared this machine"}},
		{"report.md", md.String(), []string{"| medium (unsustained) | push 400/s", "| small (machine-bound) | push 200/s", "| pico | push 100/s",
			"- **Warning:** size medium is unsustained: the system did not hold its load: workload push achieved 271/s",
			"### Size `medium` — push 400/s (1.56 MiB/s sent), query 25/s (unsustained)",
			"Left out of the fits: `small` (machine-bound), `medium` (unsustained): the system did not hold their load, or the machine set their figures"}},
		{"report.html", html.String(), []string{"<td>medium (unsustained)</td>", "<td>small (machine-bound)</td>", "size medium is unsustained: the system did not hold its load"}},
	} {
		for _, w := range tt.want {
			if !strings.Contains(tt.out, w) {
				t.Errorf("%s lacks %q", tt.where, w)
			}
		}
		if strings.Contains(tt.out, "pico (unsustained") || strings.Contains(tt.out, "pico (machine") || strings.Contains(tt.out, "size pico is") {
			t.Errorf("%s marks pico", tt.where)
		}
		if t.Failed() {
			t.Log(tt.out)
		}
	}
	var s struct {
		Cells []struct {
			Insights struct {
				Sizes []struct {
					Size         string `json:"size"`
					Sustained    bool   `json:"sustained"`
					SustainedWhy string `json:"sustained_why"`
					MachineBound bool   `json:"machine_bound"`
				} `json:"sizes"`
			} `json:"insights"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	sizes := s.Cells[0].Insights.Sizes
	if len(sizes) != 3 || !sizes[0].Sustained || sizes[0].MachineBound || !sizes[1].Sustained || !sizes[1].MachineBound ||
		sizes[2].Sustained || sizes[2].SustainedWhy != "workload push achieved 271/s of the 333/s asked (18.6 % short)" {
		t.Errorf("summary.json sizes %+v", sizes)
	}
	files, err := SizeFiles(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		unsustained := strings.Contains(string(f.Data), "\n# unsustained: the system did not hold its load: workload push achieved 271/s")
		machine := strings.Contains(string(f.Data), "\n# machine-bound: generator 0.55 + ingester 1.45 = 2.00 of 2 cores (≥ 90 %); the generator")
		if unsustained != strings.HasSuffix(f.Name, "-medium.yaml") || machine != strings.HasSuffix(f.Name, "-small.yaml") {
			t.Errorf("%s: unsustained %v, machine-bound %v:\n%s", f.Name, unsustained, machine, f.Data)
		}
	}
}

// The scaling sections name the sizes left out of the fits.
func TestHeldLeftOutOfFits(t *testing.T) {
	in := heldRun().Cells[0].Insights
	if got, want := leftOutOfFits(in, plain), "small (machine-bound), medium (unsustained)"; got != want {
		t.Errorf("left out %q, want %q", got, want)
	}
	in.Sizes[2].Held.ClientBound = true
	if got := leftOutOfFits(in, plain); !strings.HasSuffix(got, "medium (unsustained)") {
		t.Errorf("left out %q: client-bound does not keep a size out", got)
	}
	if leftOutOfFits(sizesRun().Cells[0].Insights, plain) != "" || heldMark(analysis.TShirt{}) != "" {
		t.Error("a held size is marked")
	}
}
