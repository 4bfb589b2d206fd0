package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/view"
)

// NoneFound qualifies a check that found nothing of what was written:
// data lost whole looks the same as data the system shows later than the
// read-back waited, or a query_url that reads another system or tenant.
const NoneFound = "(none found: so it looks too when the system shows writes later than verify_wait, " +
	"as VictoriaMetrics hides the last 30 s by default, or when query_url reads another system or tenant)"

// checkResult is a check's outcome in words: "ok", "late: 400 series,
// the last 1.5s after its write", "LOST 3 traces", "UNVERIFIED: why";
// mark sets the words LOST and UNVERIFIED apart.
func checkResult(c driver.Check, mark func(string) string) string {
	switch c.State {
	case driver.CheckLost:
		if c.Found == 0 && c.Expected > 0 {
			return mark("LOST") + " " + amount(c.Shortfall(), c.Unit) + " " + NoneFound
		}
		return mark("LOST") + " " + amount(c.Shortfall(), c.Unit)
	case driver.CheckUnverified:
		return mark("UNVERIFIED") + ": " + c.Reason
	case driver.CheckLate:
		return fmt.Sprintf("late: %s, the last %v after its write", amount(c.Late, c.Unit), c.LateBy.Round(time.Millisecond))
	}
	return "ok"
}

// driverNotes is every workload's notes by workload name.
func driverNotes(r *view.Run) map[string]*view.DriverNotes {
	out := map[string]*view.DriverNotes{}
	for _, c := range r.AllCells() {
		for _, p := range c.Phases {
			for name, n := range p.Drivers {
				out[name] = n
			}
		}
	}
	return out
}

// checksOf are n's checks; none when the driver told nothing (n is nil).
func checksOf(n *view.DriverNotes) []driver.Check {
	if n == nil {
		return nil
	}
	return n.Checks
}

// markdownDriver writes a workload's driver facts and read-back checks
// (driverSection).
func markdownDriver(b *strings.Builder, n *view.DriverNotes, level int) {
	d := &doc{}
	driverSection(d, n, level)
	d.markdown(b)
}

// driverSection is a workload's driver facts and read-back checks as
// sections at level.
func driverSection(d *doc, n *view.DriverNotes, level int) {
	if n == nil {
		return
	}
	if len(n.Facts) > 0 {
		d.heading(level, "Driver facts")
		var facts []item
		for _, f := range n.Facts {
			facts = append(facts, item{text: f.Name + ": " + f.Value})
		}
		d.list(facts...)
	}
	if len(n.Checks) == 0 {
		return
	}
	d.heading(level, "Read-back checks")
	t := &table{Head: []string{"Check", "Expected", "Found", "Result", "Note"}, Right: []bool{false, true, true, false, false}}
	for _, c := range n.Checks {
		t.Rows = append(t.Rows, []string{c.Name, amount(c.Expected, c.Unit), amount(c.Found, c.Unit), checkResult(c, strong),
			strings.ReplaceAll(c.Note, "\n", " ")})
		t.Fail = append(t.Fail, c.State == driver.CheckLost || c.State == driver.CheckUnverified)
	}
	d.table(t)
}

// terminalDriver writes a line per read-back check of each workload.
func terminalDriver(w io.Writer, r *view.Run) {
	notes := driverNotes(r)
	for _, s := range r.Workloads {
		for _, c := range checksOf(notes[s.Workload.Name]) {
			fmt.Fprintf(w, "%s: read back %s: %s of %s: %s\n", s.Workload.Name, c.Name,
				amount(c.Found, ""), amount(c.Expected, c.Unit), checkResult(c, func(s string) string { return s }))
		}
	}
}

// amount is a count with its unit: "49980 samples".
func amount(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v != float64(int64(v)) {
		s = num3(v)
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// jsonCheck is a check in summary.json, in its own field order: lost
// is its state, kept for readers of the first summaries.
type jsonCheck struct {
	Name          string  `json:"name"`
	Expected      float64 `json:"expected"`
	Found         float64 `json:"found"`
	Unit          string  `json:"unit"`
	Lost          bool    `json:"lost"`
	Note          string  `json:"note"`
	State         string  `json:"state"`
	Late          float64 `json:"late"`
	Reason        string  `json:"reason,omitempty"`
	Shortfall     float64 `json:"shortfall"`
	LateBySeconds float64 `json:"late_by_seconds"`
}

// toJSONDriver fills a workload's facts and checks.
func toJSONDriver(jw *jsonWorkload, n *view.DriverNotes) {
	if n == nil {
		return
	}
	jw.Facts = append(jw.Facts, n.Facts...)
	for _, c := range n.Checks {
		jw.Checks = append(jw.Checks, jsonCheck{Name: c.Name, Expected: c.Expected, Found: c.Found, Unit: c.Unit,
			Lost: c.State == driver.CheckLost, Note: c.Note, State: c.State, Late: c.Late, Reason: c.Reason,
			Shortfall: c.Shortfall(), LateBySeconds: c.LateBy.Seconds()})
	}
}
