package report

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
)

// heldMark is what a table of sizes adds to a size's name for its
// verdicts (analysis.Held): " (unsustained)", " (machine-bound,
// client-bound)"; "" for a load held on a machine it did not fill.
func heldMark(t analysis.TShirt) string {
	if m := t.Held.Marks(); len(m) > 0 {
		return " (" + strings.Join(m, ", ") + ")"
	}
	return ""
}

// heldNote is a size's verdict and what it rests on.
type heldNote struct{ verdict, why string }

// heldNotes say why a size is unsustained or machine-bound, and what that
// means for its figures; none for a load held on a machine it did not
// fill (a client-bound size's warning is the phase's).
func heldNotes(t analysis.TShirt) []heldNote {
	var out []heldNote
	if h := t.Held; !h.Sustained() {
		out = append(out, heldNote{"unsustained", "the system did not hold its load: " + h.Why() +
			"; its figures are of a system past its capacity, not of one serving that load"})
	}
	if h := t.Held; h.MachineBound != "" {
		out = append(out, heldNote{"machine-bound", h.MachineBound + "; " + analysis.MachineAdvice})
	}
	if h := t.Held; h.MachineBusy != "" {
		out = append(out, heldNote{"machine-busy", h.MachineBusy + "; " + analysis.MachineBusyAdvice})
	}
	return out
}

// heldLines are heldNotes as warnings: "size large is unsustained: …".
func heldLines(t analysis.TShirt) []string {
	var out []string
	for _, n := range heldNotes(t) {
		out = append(out, fmt.Sprintf("size %s is %s: %s", t.Size, n.verdict, n.why))
	}
	return out
}

// leftOutOfFits names the sizes left out of the scaling fits and why,
// each name as name gives it: "`large` (unsustained), `xl`
// (machine-bound)"; "" when none is.
func leftOutOfFits(in *analysis.Insights, name func(string) string) string {
	var parts []string
	for _, t := range in.Sizes {
		if !t.Held.Fits() {
			parts = append(parts, name(t.Size)+" ("+strings.Join(t.Held.Marks()[:heldFitMarks(t.Held)], ", ")+")")
		}
	}
	return strings.Join(parts, ", ")
}

func plain(s string) string { return s }

// heldFitMarks is how many of h's marks (unsustained, machine-bound,
// machine-busy come first) keep a size out of the fits.
func heldFitMarks(h analysis.Held) int {
	n := 0
	if !h.Sustained() {
		n++
	}
	if h.MachineBound != "" {
		n++
	}
	if h.MachineBusy != "" {
		n++
	}
	return n
}
