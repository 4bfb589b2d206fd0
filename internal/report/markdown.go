package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// Markdown writes r as a Markdown report.
func Markdown(w io.Writer, r *view.Run) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# perflab run `%s`\n\n", r.Name)
	fmt.Fprintf(b, "| | |\n|---|---|\n")
	fmt.Fprintf(b, "| Started | %s |\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	if !r.Ended.IsZero() {
		fmt.Fprintf(b, "| Duration | %s |\n", r.Ended.Sub(r.Started).Round(100*time.Millisecond))
	}
	fmt.Fprintf(b, "| State | %s |\n", mdEscape(strings.ReplaceAll(stateText(r), "\n", " ")))
	if r.Repeat > 1 {
		fmt.Fprintf(b, "| Repetitions | %s |\n", repeatText(r.Repeat))
	}
	if r.Command != "" {
		fmt.Fprintf(b, "| Command | `%s` |\n", r.Command)
	}
	if r.Tool != "" {
		fmt.Fprintf(b, "| Generator | %s on %s |\n", r.Tool, r.Host)
	}
	for _, line := range r.Exports {
		fmt.Fprintf(b, "| Live export | %s |\n", mdEscape(line))
	}
	markdownSLO(b, r)
	if r.Search != nil {
		d := &doc{}
		searchSection(d, r.Search, 2)
		d.markdown(b)
	}
	markdownCharts(b, r)
	matrix := isMatrix(r)
	switch {
	case len(r.Repeated) > 0:
		repeatedSections(r).markdown(b)
	case matrix:
		markdownMatrix(b, r)
	}
	markdownOverheads(b, r.Overheads)
	for _, c := range r.AllCells() {
		markdownCell(b, c, matrix)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// heading writes a Markdown heading of the given level (2 is "##").
func heading(b *strings.Builder, level int, format string, args ...any) {
	fmt.Fprintf(b, "\n%s %s\n\n", strings.Repeat("#", level), fmt.Sprintf(format, args...))
}

func stateText(r *view.Run) string { return stateOf(r.State, r.Message, "", r.InProgress) }

// stateOf is a run's, cell's or phase's state with its message; "running"
// means it was killed during, which names the cell or phase, unless it is
// in progress (its perflab still runs).
func stateOf(state, message, during string, inProgress bool) string {
	switch {
	case state == "running" && inProgress:
		return "running: in progress; figures cover what was recorded so far"
	case state == "running" && during == "":
		return "incomplete (the run was killed; figures cover what was recorded)"
	case state == "running":
		return "incomplete (the run was killed during " + during + ")"
	case message != "":
		return state + ": " + message
	}
	return state
}

// markdownWorkload writes one workload's section with its heading at level:
// the same facts and tables as the HTML page.
func markdownWorkload(b *strings.Builder, s *analysis.Summary, level int) {
	w := s.Workload
	heading(b, level, "Workload `%s`", w.DisplayName())
	for _, f := range workloadFacts(s, "`"+w.Target+"`") {
		fmt.Fprintf(b, "- %s\n", f)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(b, "- **Warning:** %s\n", warn)
	}
	heading(b, level+1, "Throughput")
	throughputTable(s).markdown(b)
	heading(b, level+1, "Latency")
	latencyTable(s).markdown(b)
	if n := latencyNote(s); n != "" {
		b.WriteString("\n" + n + "\n")
	}
	markdownTokens(b, s, level+1)
	markdownLLM(b, s, level+1)
	if t := errorsTable(s); t != nil {
		heading(b, level+1, "%s", t.Title)
		t.markdown(b)
	} else {
		b.WriteString("\nNo errors in the window.\n")
	}
}

// workloadFacts are the facts listed above a workload's tables, its target
// written as target.
func workloadFacts(s *analysis.Summary, target string) []string {
	w := s.Workload
	facts := []string{
		fmt.Sprintf("Driver: %s → %s", w.Driver, target),
		"Load model: " + modelText(w),
		fmt.Sprintf("Steady-state window: %s → %s (%.1f s, %d intervals; rule: %s)",
			offset(w.Start, s.Window.Start), offset(w.Start, s.Window.End), s.Seconds, s.Intervals, s.Window.Rule),
		fmt.Sprintf("Requests in window: %d (%.1f/s); whole run: %d, of which %d failed", s.Requests, s.Rate, s.RequestsTotal, s.ErrorsTotal),
	}
	if w.Model == "open" {
		facts = append(facts,
			fmt.Sprintf("Dropped arrivals: %d in window, %d in the whole run (%s of %d scheduled; no free VU at vus.max)",
				s.Dropped, s.DroppedTotal, pct(float64(s.DroppedTotal), float64(w.Scheduled)), w.Scheduled),
			fmt.Sprintf("Arrivals not issued by the generator: %d of %d due", w.Unissued, w.Scheduled+w.Unissued),
			fmt.Sprintf("Scheduler lag (dispatch − intended start): p50 %s, p99 %s, max %s", dur(s.Lag.P50), dur(s.Lag.P99), dur(s.Lag.Max)))
	}
	if text := connectionsText(s); text != "" {
		facts = append(facts, "Connections: "+text)
	}
	return facts
}

// connectionsText says what an HTTP workload's client counted of its
// connections in the window, and how much of what it received was
// bodies; "" for a driver that counts none.
func connectionsText(s *analysis.Summary) string {
	hasConn := false
	for _, op := range s.Ops {
		hasConn = hasConn || op.HasConnections()
	}
	if !hasConn {
		return ""
	}
	c := s.Connections()
	var recv float64
	for _, op := range s.Ops {
		recv += op.BytesRecvPS
	}
	return fmt.Sprintf("%d requests retried on a new connection, %d kept-alive connections found closed by the server, %d stray answers; "+
		"bodies %s of the %s received (the rest: status lines, headers, framing)", c.Retries, c.IdleCloses, c.Stray, bytesPS(c.BodyBytesPS), bytesPS(recv))
}

// throughputTable, latencyTable and errorsTable are a workload's tables,
// in Markdown and HTML alike; errorsTable is nil when nothing failed.
func throughputTable(s *analysis.Summary) *table {
	t := &table{Title: "Throughput", Head: []string{"Operation", "Requests", "Rate", "Target", "Success", "Received/s", "Sent/s"},
		Right: []bool{false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		t.Rows = append(t.Rows, []string{op.Name, fmt.Sprint(op.Requests), fmt.Sprintf("%.1f/s", op.Rate), targetText(s.Workload, s, op),
			pct(float64(op.OK), float64(op.Requests)), bytesPS(op.BytesRecvPS), bytesPS(op.BytesSentPS)})
	}
	return t
}

func latencyTable(s *analysis.Summary) *table {
	t := &table{Title: "Latency", Note: latencyNote(s), Head: []string{"Operation", "Measure", "p50", "p90", "p99", "p99.9", "max", "mean"},
		Right: []bool{false, false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		for _, m := range latencyMeasures(op) {
			t.Rows = append(t.Rows, []string{op.Name, m.what, dur(m.q.P50), dur(m.q.P90), dur(m.q.P99), dur(m.q.P999), dur(m.q.Max), dur(m.q.Mean)})
		}
	}
	return t
}

func errorsTable(s *analysis.Summary) *table {
	t := &table{Title: "Errors in the window", Head: []string{"Operation", "Class", "Count", "Share", "Sample"},
		Right: []bool{false, false, true, true, false}}
	for _, op := range s.Ops {
		for _, e := range op.Errors {
			t.Rows = append(t.Rows, []string{op.Name, e.Class, fmt.Sprint(e.Count), pct(float64(e.Count), float64(op.Requests)), e.Sample})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

func modelText(w analysis.Workload) string {
	switch {
	case w.Model == "open" && w.Schedule != nil:
		return fmt.Sprintf("open (arrival rate %s: %s on average over the window; VUs %d–%d, peak %d used; latency measured from each arrival's intended start)",
			scheduleText(w), rateText(w.TargetRate), w.VUsMin, w.VUsMax, w.MaxVUs)
	case w.Model == "open":
		return fmt.Sprintf("open (arrival rate %s; VUs %d–%d, peak %d used; latency measured from each arrival's intended start)",
			rateText(w.TargetRate), w.VUsMin, w.VUsMax, w.MaxVUs)
	case w.Schedule != nil:
		return fmt.Sprintf("closed (%s, peak %d; each VU starts its next operation when the last ends)", scheduleText(w), w.MaxVUs)
	}
	return fmt.Sprintf("closed (%d concurrent VUs, each starting its next operation when the last ends)", w.MaxVUs)
}

// scheduleText describes a workload's ramping schedule: "ramp 10 →
// 200/s over 30 s, 200/s for 60 s", "ramp 0 → 50 VUs over 10 s"; "" for
// none.
func scheduleText(w analysis.Workload) string {
	switch {
	case w.Schedule == nil:
		return ""
	case w.Model == "open":
		return w.Schedule.Text("/s")
	}
	return w.Schedule.Text(" VUs")
}

func targetText(w analysis.Workload, s *analysis.Summary, op analysis.Op) string {
	if len(s.Ops) != 1 {
		return "–"
	}
	return targetRateText(w)
}

// targetRateText is the rate a workload's schedule asked for over its
// window, "(schedule mean)" for a ramping one; "–" for none.
func targetRateText(w analysis.Workload) string {
	switch {
	case w.TargetRate == 0:
		return "–"
	case w.Schedule != nil:
		return rateText(w.TargetRate) + " (schedule mean)"
	}
	return rateText(w.TargetRate)
}

func rateText(r float64) string {
	if r == float64(int64(r)) {
		return fmt.Sprintf("%d/s", int64(r))
	}
	return fmt.Sprintf("%.1f/s", r)
}

func offset(start, t time.Time) string {
	return fmt.Sprintf("%.1f s", t.Sub(start).Seconds())
}

func pct(n, of float64) string {
	if of == 0 {
		return "–"
	}
	v := 100 * n / of
	switch {
	case v == 100 || v == 0:
		return fmt.Sprintf("%.0f %%", v)
	case v > 99.99:
		return fmt.Sprintf("%.3f %%", v)
	}
	return fmt.Sprintf("%.2f %%", v)
}

// dur prints a latency with three significant digits in a unit that suits it.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// bytesPS is a byte rate, with its bits per second from 1 Gbps up, where
// links are rated in them: "1.48 GiB/s (12.7 Gbps)".
func bytesPS(v float64) string {
	if v >= 1e9/8 {
		return fmt.Sprintf("%s/s (%.3g Gbps)", sizeText(v), v*8/1e9)
	}
	return sizeText(v) + "/s"
}
