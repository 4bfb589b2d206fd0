package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// Progress shows a live line per interval: rewritten in place on a terminal,
// a plain line every PlainEvery intervals otherwise.
type Progress struct {
	w          io.Writer
	tty        bool
	PlainEvery int
	// Width, when set, is the terminal's width: the in-place line is cut
	// to fit it, so that it never wraps onto a new line. NoEscapes draws
	// it in place with a carriage return alone, overwriting the last line
	// with spaces (TERM=dumb, NO_COLOR), instead of erasing it with ANSI
	// escape codes.
	Width     int
	NoEscapes bool
	last      int // runes of the last in-place line

	mu       sync.Mutex
	workload string
	start    time.Time
	duration time.Duration
	target   float64
	errors   map[string]int64 // by workload: a phase runs several at once
	dropped  map[string]int64
	n        int
}

// NewProgress writes progress to w; tty selects the in-place line.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty, PlainEvery: 5}
}

// Begin starts a workload's progress.
func (p *Progress) Begin(workload string, duration time.Duration, targetRate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.workload, p.start, p.duration, p.target = workload, time.Now(), duration, targetRate
	p.errors, p.dropped, p.n = map[string]int64{}, map[string]int64{}, 0
}

// Interval implements engine.Sink.
func (p *Progress) Interval(workload string, iv *stats.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	all := stats.NewOpStats()
	for _, st := range iv.Ops {
		all.Merge(st)
	}
	if p.errors == nil { // Interval before Begin
		p.errors, p.dropped = map[string]int64{}, map[string]int64{}
	}
	p.errors[workload] += all.Classes.Errors()
	p.dropped[workload] += iv.Dropped
	secs := iv.End.Sub(iv.Start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(all.Classes.Total()) / secs
	}
	elapsed := iv.End.Sub(p.start).Round(time.Second)
	eta := (p.duration - iv.End.Sub(p.start)).Round(time.Second)
	line := fmt.Sprintf("%s %v/%v ETA %v  %.0f/s", workload, elapsed, p.duration, max(eta, 0), rate)
	if p.target > 0 {
		line += fmt.Sprintf(" (target %s)", rateText(p.target))
	}
	// no request succeeded: no latency, not 0; under 100, no p99 apart
	// from the interval's top (analysis.MinCountFor)
	p50, p99 := "–", "–"
	if n := all.Latency.Count(); n > 0 {
		p50 = dur(all.Latency.Quantile(0.5))
		if n >= analysis.MinCountFor(0.99) {
			p99 = dur(all.Latency.Quantile(0.99))
		}
	}
	line += fmt.Sprintf("  p50 %s p99 %s  errors %d  dropped %d  VUs %d", p50, p99, p.errors[workload], p.dropped[workload], iv.VUs)
	switch {
	case p.tty:
		p.inPlace(line)
	case p.n == 1 || p.n%p.PlainEvery == 0:
		fmt.Fprintln(p.w, line)
	}
}

// inPlace draws line over the last one, cut to the terminal's width.
func (p *Progress) inPlace(line string) {
	if r := []rune(line); p.Width > 1 && len(r) > p.Width-1 {
		line = string(r[:p.Width-2]) + "…"
	}
	n := len([]rune(line))
	if p.NoEscapes {
		fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(p.last-n, 0)))
	} else {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	}
	p.last = n
}

// End finishes the in-place line.
func (p *Progress) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tty && p.NoEscapes:
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.last))
	case p.tty:
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.last = 0
}

// requestsText is an operation's requests in the window beside those
// sent over the whole run, warm-up and wind-down included: "9,500 in
// window / 10,000 sent", so that the first figure a user sees agrees with
// summary.json's totals and the exports'.
func requestsText(s *analysis.Summary, op analysis.Op) string {
	for _, t := range s.OpTotals {
		if t.Name == op.Name && t.Requests != op.Requests {
			return thousands(op.Requests) + " in window / " + thousands(t.Requests) + " sent"
		}
	}
	return thousands(op.Requests)
}

// thousands is n with its digits grouped by commas: 10,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// Terminal writes the final summary table of r.
func Terminal(w io.Writer, r *view.Run) error {
	if len(r.Workloads) == 0 {
		fmt.Fprintln(w, "no workload ran")
		if err := terminalResources(w, r); err != nil {
			return err
		}
		return terminalSLO(w, r)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\toperation\trequests\trate\tsuccess\tp50\tp90\tp99\tp99.9\tmax\tdropped\t")
	for _, s := range r.Workloads {
		for _, op := range s.Ops {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f/s\t%s\t%s\t%d\t\n", s.Workload.Name, op.Name,
				requestsText(s, op), op.Rate, pct(float64(op.OK), float64(op.Requests)), terminalQuantiles(op.Latency), s.Dropped)
			if op.HasFailedLatency() {
				fmt.Fprintf(tw, "%s\t%s (all requests)\t\t\t\t%s\t\t\n", s.Workload.Name, op.Name, terminalQuantiles(op.AllLatency))
			}
		}
		if len(s.Ops) == 0 {
			fmt.Fprintf(tw, "%s\t(no operations completed)\t\t\t\t\t\t\t\t\t%d\t\n", s.Workload.Name, s.Dropped)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Workloads {
		for _, op := range s.Ops {
			for _, e := range op.Errors {
				fmt.Fprintf(w, "%s %s: %d × %s, e.g. %s\n", s.Workload.Name, op.Name, e.Count, e.Class, e.Sample)
			}
		}
		if text := connectionsText(s); text != "" {
			fmt.Fprintf(w, "%s: connections: %s\n", s.Workload.Name, text)
		}
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "%s: warning: %s\n", s.Workload.Name, warn)
		}
	}
	terminalMeasures(w, r)
	terminalDriver(w, r)
	terminalWorkers(w, r)
	terminalOverheads(w, r.Overheads)
	fmt.Fprintf(w, "latency is measured from each operation's intended start%s; %s\n", latencyScope(r), windowNote(r))
	if err := terminalResources(w, r); err != nil {
		return err
	}
	return terminalSLO(w, r)
}

// terminalQuantiles are the p50 … max cells of a row of the summary table.
func terminalQuantiles(q analysis.Quantiles) string {
	return strings.Join([]string{quantileText(q, q.P50), quantileText(q, q.P90), quantileText(q, q.P99),
		quantileText(q, q.P999), quantileText(q, q.Max)}, "\t")
}

// latencyScope says which requests the summary table's latency is of,
// when some failed.
func latencyScope(r *view.Run) string {
	var failed, mixed bool
	for _, s := range r.Workloads {
		failed, mixed = failed || s.HasFailedLatency(), mixed || s.LatencyOfAll
	}
	switch {
	case mixed:
		return ", over all requests, failed ones too (the run's store, results format 2 or older, did not keep them apart)"
	case failed:
		return ", over successful requests (every request's in the rows marked all requests)"
	}
	return ""
}

func windowNote(r *view.Run) string {
	var parts []string
	for _, s := range r.Workloads {
		parts = append(parts, fmt.Sprintf("%s: %.1f s window (%s)", s.Workload.Name, s.Seconds, s.Window.Rule))
	}
	return strings.Join(parts, "; ")
}
