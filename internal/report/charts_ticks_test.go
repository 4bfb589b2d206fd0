package report

import (
	"regexp"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
)

// Tick labels lose the decimal zeros they all share: gonum writes a step
// of 2.5 with two decimals whatever the magnitude, and the throughput
// chart of a 24,000/s run read 0.00, 25000.00.
func TestChartTicksHaveNoSharedZeros(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, top := range []float64{24050, 75000, 2.4} {
		pl := newTimePlot("operations/s", chartSpan{start: t0, end: t0.Add(8 * time.Second)})
		if err := addLine(pl, "w", plotter.XYs{{X: 1, Y: top / 2}, {X: 7, Y: top}}, colour(0), nil); err != nil {
			t.Fatal(err)
		}
		svg, err := renderSVG(pl, "t")
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`>-?[0-9]+\.[0-9]*0<`).FindAll(svg, -1); len(m) > 0 && top > 10 {
			t.Errorf("up to %v: tick labels %q", top, m)
		}
		if m := regexp.MustCompile(`>[0-9]+\.[0-9]0<`).FindAll(svg, -1); len(m) > 0 {
			t.Errorf("up to %v: tick labels with a needless zero %q", top, m)
		}
	}
}
