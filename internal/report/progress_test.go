package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// An interval in which every request failed has no latency: the progress
// line says so, and does not show 0 (a target that died mid-run looked
// infinitely fast).
func TestProgressWithoutSuccessShowsNoLatency(t *testing.T) {
	t0 := time.Now()
	rec := stats.NewRecorder(1, t0)
	for i := 0; i < 10; i++ {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		rec.Record(0, &stats.Sample{Op: "GET /", Intended: at, Start: at, End: at.Add(50 * time.Microsecond),
			Class: stats.Connect, Message: "connection refused"})
	}
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.Begin("http", 10*time.Second, 100)
	p.Interval("http", rec.Flush(t0.Add(time.Second)))
	if line := out.String(); !strings.Contains(line, "p50 – p99 –") || !strings.Contains(line, "errors 10") {
		t.Errorf("progress line %q", line)
	}
}

// An interval of fewer than 100 latencies has a p50 but no p99: its
// p99 would be its slowest request.
func TestProgressShowsAP99OnlyOf100(t *testing.T) {
	t0 := time.Now()
	line := func(n int) string {
		rec := stats.NewRecorder(1, t0)
		for i := range n {
			at := t0.Add(time.Duration(i) * time.Millisecond)
			d := time.Millisecond
			if i == 0 {
				d = time.Second // the slowest, which a p99 of few would be
			}
			rec.Record(0, &stats.Sample{Op: "GET /", Intended: at, Start: at, End: at.Add(d), Class: stats.OK})
		}
		var out bytes.Buffer
		p := NewProgress(&out, false)
		p.Begin("http", 10*time.Second, 100)
		p.Interval("http", rec.Flush(t0.Add(time.Second)))
		return out.String()
	}
	if l := line(99); !strings.Contains(l, "p50 1.00 ms p99 –") {
		t.Errorf("99 latencies: %q, want a p50 and no p99", l)
	}
	if l := line(100); !strings.Contains(l, "p50 1.00 ms p99 1.00 ms") {
		t.Errorf("100 latencies: %q, want a p50 and a p99", l)
	}
}

// In a phase of several workloads each progress line counts the errors of
// the workload it names, not of all of them together.
func TestProgressCountsEachWorkloadsErrors(t *testing.T) {
	t0 := time.Now()
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.PlainEvery = 1
	p.Begin("laptop", 10*time.Second, 0)
	for i, w := range []string{"write", "alerts", "write"} {
		rec := stats.NewRecorder(1, t0.Add(time.Duration(i)*time.Second))
		at := t0.Add(time.Duration(i) * time.Second)
		class := stats.OK
		if w == "write" {
			class = stats.Status5xx
		}
		rec.Record(0, &stats.Sample{Op: "op", Intended: at, Start: at, End: at.Add(time.Millisecond), Class: class, Message: "boom"})
		p.Interval(w, rec.Flush(at.Add(time.Second)))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "alerts") || !strings.Contains(lines[1], "errors 0") || !strings.Contains(lines[2], "errors 2") {
		t.Errorf("progress lines:\n%s", out.String())
	}
}

// On a terminal the line is cut to its width (never wrapping onto a new
// line); without escape codes (TERM=dumb, NO_COLOR) it is drawn with a
// carriage return alone, a shorter line padded over a longer one, and
// End blanks it.
func TestProgressFitsTheTerminal(t *testing.T) {
	t0 := time.Now()
	interval := func(i, n int) *stats.Interval {
		rec := stats.NewRecorder(1, t0.Add(time.Duration(i)*time.Second))
		at := t0.Add(time.Duration(i) * time.Second)
		for k := 0; k < n; k++ {
			rec.Record(0, &stats.Sample{Op: "GET /", Intended: at, Start: at, End: at.Add(time.Millisecond), Class: stats.OK})
		}
		return rec.Flush(at.Add(time.Second))
	}
	for _, noEsc := range []bool{false, true} {
		var out bytes.Buffer
		p := NewProgress(&out, true)
		p.Width, p.NoEscapes = 40, noEsc
		p.Begin("a-workload-with-a-long-name", 10*time.Second, 1000)
		p.Interval("a-workload-with-a-long-name", interval(0, 1000))
		p.Interval("w", interval(1, 1))
		p.End()
		got := out.String()
		if strings.Contains(got, "\033") == noEsc {
			t.Errorf("noEscapes %v: escape codes %q", noEsc, got)
		}
		for _, line := range strings.Split(got, "\r") {
			if n := len([]rune(strings.TrimPrefix(line, "\033[K"))); n > 39 {
				t.Errorf("noEscapes %v: a line of %d runes on a terminal 40 wide: %q", noEsc, n, line)
			}
		}
		if parts := strings.Split(got, "\r"); noEsc && (len(parts) != 5 || len([]rune(parts[2])) != len([]rune(parts[1])) || strings.TrimSpace(parts[3]) != "") {
			t.Errorf("without escapes: the short line does not cover the long one, or End does not blank it: %q", parts)
		}
	}
}
