package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// sizeText prints bytes with units.FormatBytes.
func sizeText(v float64) string { return units.FormatBytes(v) }

// num3 prints a CPU figure in cores, or a rate such as GC cycles per
// minute, with two or three significant digits and no exponent: 12.4, 1.46,
// 0.52, 0.052; below 0.001 "<0.001".
func num3(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a < 0.001:
		return "<0.001"
	}
	// Each precision up to the magnitude at which it would show a fourth
	// digit; judged on the rounded figure, so that 0.09999 is 0.10 (not
	// 0.100) and 9.999 is 10.0 (not 10.00).
	for _, p := range []struct {
		below  float64
		digits int
	}{{0.01, 4}, {0.1, 3}, {10, 2}, {100, 1}} {
		if s := strconv.FormatFloat(v, 'f', p.digits, 64); math.Abs(roundTo(v, p.digits)) < p.below {
			return s
		}
	}
	return fmt.Sprintf("%.0f", v)
}

// roundTo is v rounded to digits decimals, as FormatFloat rounds it.
func roundTo(v float64, digits int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return r
}

// p99Text prints a Stat's P99 with f, or "–" when the sample cannot
// support one.
func p99Text(s analysis.Stat, f func(float64) string) string {
	if !s.HasP99() {
		return "–"
	}
	return f(s.P99)
}

// p99Note says what a resource table's P99 is: with fewer than 100
// samples, their maximum, and the count it rests on.
func p99Note(r *analysis.Resources) string {
	if r.Ticks < analysis.MinSamplesP99 { // no P99 at all: the warning says so
		return "P99 is the nearest-rank 99th percentile of the samples; the generator is not in the totals."
	}
	if r.Ticks < 100 {
		return fmt.Sprintf("P99 is the nearest-rank 99th percentile of the samples: of the %d here, their maximum "+
			"(a P99 other than the maximum needs 100); the generator is not in the totals.", r.Ticks)
	}
	return fmt.Sprintf("P99 is the nearest-rank 99th percentile of the %d samples; the generator is not in the totals.", r.Ticks)
}

// clock prints a time of day in UTC.
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// windowText describes a resource window: "17:24:10–17:25:00 UTC, 50
// samples at 1s".
func windowText(r *analysis.Resources) string {
	s := fmt.Sprintf("%s–%s UTC, %d samples", clock(r.Window.Start), clock(r.Window.End), r.Ticks)
	if r.Step > 0 {
		s += " at " + r.Step.Round(time.Millisecond).String()
	}
	return s
}

// cellLabel names a cell in notes and headings.
func cellLabel(c *view.Cell) string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("cell %d", c.Index)
}

// mdEscape keeps a free text from breaking a Markdown table row.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// fitCores writes a CPU figure of a scaling fit (an intercept, a slope
// per unit of load) with three significant digits, however small: in
// cores from 0.1 core up ("1.46 cores", "0.256 cores"), else in
// millicores ("4.2 millicores", "0.31 millicores"); never "<0.001".
func fitCores(v float64) string {
	if v == 0 || math.Abs(v) >= 0.1 {
		return units.Sig3(v) + " cores"
	}
	return units.Sig3(1000*v) + " millicores"
}

// fitBytes writes a memory figure of a scaling fit with three significant
// digits: as sizeText from 100 B up, else in bytes ("0.42 B", "5.3 B").
func fitBytes(v float64) string {
	if math.Abs(v) >= 100 {
		return sizeText(v)
	}
	return units.Sig3(v) + " B"
}

// belowZero is how a figure of a fit below zero is shown: CPU and memory
// can't be negative, so 0, and why.
const belowZero = "0 (fit below zero)"

// atLeastZero writes v with f, or belowZero when v < 0.
func atLeastZero(v float64, f func(float64) string) string {
	if v < 0 {
		return belowZero
	}
	return f(v)
}

// isMatrix reports whether the run has a matrix: more than one cell, or
// cells with variables.
func isMatrix(r *view.Run) bool {
	cs := r.AllCells()
	return len(cs) > 1 || len(cs) == 1 && len(cs[0].Vars) > 0
}
