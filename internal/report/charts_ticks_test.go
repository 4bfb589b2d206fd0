package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
)

// Tick labels carry no decimal zeros they all share: a step of 2.5 with
// two decimals whatever the magnitude made a 24,000/s run's throughput
// axis read 0.00, 25000.00.
func TestChartTicksHaveNoSharedZeros(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, top := range []float64{24050, 75000, 2.4} {
		c := newTimeChart("operations/s", chartSpan{start: t0, end: t0.Add(8 * time.Second)})
		c.add("w", []xy{{X: 1, Y: top / 2}, {X: 7, Y: top}}, colour(0), nil)
		svg := c.svg()
		if m := regexp.MustCompile(`>-?[0-9]+\.[0-9]*0<`).FindAll(svg, -1); len(m) > 0 && top > 10 {
			t.Errorf("up to %v: tick labels %q", top, m)
		}
		if m := regexp.MustCompile(`>[0-9]+\.[0-9]0<`).FindAll(svg, -1); len(m) > 0 {
			t.Errorf("up to %v: tick labels with a needless zero %q", top, m)
		}
	}
}

func TestTidyTicks(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want string
	}{
		{24050, "0 5000 10000 15000 20000 25000"},
		{75000, "0 20000 40000 60000 80000"},
		{2.4, "0.0 0.5 1.0 1.5 2.0 2.5"},
		{1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0.013, "0.000 0.005 0.010 0.015"},
		{110, "0 25 50 75 100 125"},
		{0, "0.0 0.2 0.4 0.6 0.8 1.0"}, // nothing above 0: the axis goes to 1
	} {
		lc := &lineChart{lines: []chartLine{{pts: []xy{{0, c.top}}}}}
		var got []string
		for _, tk := range lc.yTicks() {
			got = append(got, tk.label)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("y up to %v: ticks %q, want %q", c.top, got, c.want)
		}
	}
	var got []string
	for _, tk := range linearTicks(0, 37) {
		got = append(got, tk.label)
	}
	if strings.Join(got, " ") != "0 10 20 30" {
		t.Errorf("x ticks to 37 s: %q", got)
	}
}

var (
	svgPathAll  = regexp.MustCompile(`<path d="M([^"]*)" style="([^"]*)"`)
	svgRect     = regexp.MustCompile(`<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)" style="fill:rgb\(0,114,178\)`)
	svgTickText = regexp.MustCompile(`<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*text-anchor="(end|middle)">([^<]*)</text>`)
)

func points(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Split(d, "L") {
		xy := strings.Split(p, ",")
		x, err1 := strconv.ParseFloat(xy[0], 64)
		y, err2 := strconv.ParseFloat(xy[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("path point %q", p)
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

// TestChartGeometry reads a drawn chart back: its data line's points sit
// where the axes' tick labels say their values are, the shaded window
// spans the window's seconds, and a point past the phase's end (an
// interval of the grace period) widens the axis rather than being lost.
func TestChartGeometry(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sp := chartSpan{start: t0, end: t0.Add(10 * time.Second),
		window: analysis.Window{Start: t0.Add(2 * time.Second), End: t0.Add(8 * time.Second)}}
	c := newTimeChart("operations/s", sp)
	c.add("w", []xy{{0, 0}, {5, 60}, {10, 100}, {11, 100}}, colour(0), []float64{6, 3})
	svg := c.svg()

	xAt, yAt := map[string]float64{}, map[string]float64{}
	for _, m := range svgTickText.FindAllSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		y, _ := strconv.ParseFloat(string(m[2]), 64)
		if string(m[3]) == "middle" {
			xAt[string(m[4])] = x
		} else {
			yAt[string(m[4])] = y - tickFont*0.35
		}
	}
	if _, ok := xAt["10"]; !ok || len(yAt) == 0 || xAt["0"] >= xAt["10"] {
		t.Fatalf("tick labels x %v, y %v", xAt, yAt)
	}
	var line [][2]float64
	for _, m := range svgPathAll.FindAllSubmatch(svg, -1) {
		if strings.Contains(string(m[2]), "stroke-dasharray:6.00,3.00") && len(points(t, string(m[1]))) > 2 {
			line = points(t, string(m[1]))
		}
	}
	if len(line) != 4 {
		t.Fatalf("the data line has points %v, want all 4", line)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.02 }
	perSec := (xAt["10"] - xAt["0"]) / 10
	if !near(line[0][0], xAt["0"]) || !near(line[2][0], xAt["10"]) || !near(line[1][0], xAt["0"]+5*perSec) || !near(line[3][0], xAt["0"]+11*perSec) {
		t.Errorf("x of the points %v; ticks 0 and 10 s at %v and %v", line, xAt["0"], xAt["10"])
	}
	if !near(line[0][1], yAt["0"]) || !near(line[2][1], yAt["100"]) || !near(line[1][1], yAt["60"]) {
		t.Errorf("y of the points %v; ticks 0, 60, 100 at %v, %v, %v", line, yAt["0"], yAt["60"], yAt["100"])
	}
	for _, m := range svgPathAll.FindAllSubmatch(svg, -1) {
		if strings.Contains(string(m[2]), "stroke-width:0.8") { // the axes: top left, bottom left, bottom right
			if axes := points(t, string(m[1])); line[3][0] > axes[2][0]+0.01 {
				t.Errorf("the point at 11 s is drawn at x %v, right of the axis' end %v", line[3][0], axes[2][0])
			}
		}
	}
	m := svgRect.FindSubmatch(svg)
	if m == nil {
		t.Fatal("no shaded window")
	}
	x, _ := strconv.ParseFloat(string(m[1]), 64)
	w, _ := strconv.ParseFloat(string(m[3]), 64)
	if !near(x, xAt["0"]+2*perSec) || !near(w, 6*perSec) {
		t.Errorf("the window is shaded from x %v, %v wide; want from %v, %v wide", x, w, xAt["0"]+2*perSec, 6*perSec)
	}
}

// TestSpectrumIsLogScaled: 90 %, 99 % and 99.9 % stand equally apart,
// and the median (1/(1−q) = 2) at log10(2) of that apart from 1.
func TestSpectrumIsLogScaled(t *testing.T) {
	h := stats.NewHist()
	for i := range 10000 {
		h.Record(time.Duration(i+1) * time.Microsecond)
	}
	c := spectrumChart([]namedSpectrum{{name: "GET", points: analysis.Spectrum(h)}})
	xAt := map[string]float64{}
	for _, m := range svgTickText.FindAllSubmatch(c.svg(), -1) {
		if string(m[3]) == "middle" {
			xAt[string(m[4])], _ = strconv.ParseFloat(string(m[1]), 64)
		}
	}
	d1, d2 := xAt["99%"]-xAt["90%"], xAt["99.9%"]-xAt["99%"]
	if d1 <= 0 || math.Abs(d1-d2) > 0.02 {
		t.Fatalf("percentile ticks at %v", xAt)
	}
	if got, want := xAt["90%"]-xAt["50%"], d1*(1-math.Log10(2)); math.Abs(got-want) > 0.02 {
		t.Errorf("50%% to 90%% is %v apart, want %v", got, want)
	}
}

// TestChartAxesCoverTheData: values below 0 extend the y axis below 0,
// points that are not numbers are left out (an SVG path with "NaN" or
// "Inf" stops drawing there), and a line with nothing left to draw has no
// legend entry.
func TestChartAxesCoverTheData(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := newTimeChart("per second", chartSpan{start: t0, end: t0.Add(10 * time.Second)})
	c.add("w", []xy{{1, 5}, {2, -12}, {3, math.Inf(1)}, {4, math.NaN()}, {5, 8}}, colour(0), nil)
	c.add("nothing", []xy{{1, math.NaN()}}, colour(1), nil)
	svg := string(c.svg())
	if strings.Contains(svg, "Inf") || strings.Contains(svg, "NaN") || strings.Contains(svg, ">nothing<") {
		t.Errorf("the SVG draws what is not a number, or names a line it cannot draw:\n%s", svg)
	}
	var lowest float64
	for _, m := range svgTickText.FindAllStringSubmatch(svg, -1) {
		if v, err := strconv.ParseFloat(m[4], 64); err == nil && m[3] == "end" {
			lowest = math.Min(lowest, v)
		}
	}
	if lowest > -12 {
		t.Errorf("the y axis starts at %v, above the lowest point -12", lowest)
	}
	var drawn int
	for _, m := range svgPathAll.FindAllStringSubmatch(svg, -1) {
		if strings.Contains(m[2], "stroke-width:1.3") {
			drawn = max(drawn, len(strings.Split(m[1], "L")))
		}
	}
	if drawn != 3 {
		t.Errorf("the line has %d points drawn, want the 3 numbers", drawn)
	}
}
