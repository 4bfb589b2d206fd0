package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// SizesMarkdown writes the suggested sizes of every cell of r (as the
// report does), each under a heading naming its cell when r has a matrix,
// or of every combination of a repeated run.
func SizesMarkdown(w io.Writer, r *view.Run) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Suggested sizes of run `%s`\n", r.Name)
	any := false
	for _, c := range r.InsightCells() {
		if c.Insights == nil {
			continue
		}
		any = true
		level := 2
		switch {
		case c.Repetitions > 0:
			heading(b, 2, "Across %d repetitions: `%s`", c.Repetitions, cellLabel(c))
			level = 3
		case isMatrix(r):
			heading(b, 2, "Cell `%s`", cellLabel(c))
			level = 3
		}
		d := &doc{}
		sizesSection(d, c, level, false)
		d.markdown(b)
	}
	if !any {
		b.WriteString("\nNo cell has resource samples of the system under test to size from.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// LoadValueText writes a load in its basis's unit: "5000/s", "9.54 MiB/s".
func LoadValueText(v float64, basis analysis.LoadBasis) string {
	if basis == analysis.LoadBytes {
		return bytesPS(v)
	}
	return rateText(v)
}

// PredictionMarkdown writes what the scaling fits of cell c predict at
// load (in the unit of the fits): per component and resource the P99, its
// 95 % prediction interval, and the request and limit of the p99 rule,
// then those requests and limits as Kubernetes resources. conversion says
// how the load asked for became load, when it was given in another unit.
func PredictionMarkdown(w io.Writer, c *view.Cell, load float64, preds []analysis.ScalingPrediction, conversion string) error {
	in := c.Insights
	b := &strings.Builder{}
	at := LoadValueText(load, in.Load)
	heading(b, 2, "Prediction at %s (cell `%s`)", at, cellLabel(c))
	if conversion != "" {
		fmt.Fprintf(b, "**Load converted:** %s.\n\n", conversion)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	fitted := in.FitLoads()
	for _, l := range fitted {
		lo, hi = min(lo, l), max(hi, l)
	}
	fmt.Fprintf(b, "From the fits of each component's P99 against the %s of workload `%s` over %d profiles (%s to %s). "+
		"Requests = predicted P99 × %.4g, limits = requests × %.4g, rounded up.\n", in.Load.Unit(), in.LoadWorkload, len(fitted),
		LoadValueText(lo, in.Load), LoadValueText(hi, in.Load), 1+in.Options.Headroom, in.Options.LimitFactor)
	predictionHeld(b, in, load, at)
	outside := load < lo || load > hi
	if outside {
		fmt.Fprintf(b, "\n**Extrapolation:** %s is outside the loads measured; the figures assume every line stays straight beyond them.\n", at)
	}
	t := predictionTable(b, at, preds, outside)
	y, err := t.YAML()
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\n```yaml\n%s```\n", y)
	_, err = io.WriteString(w, b.String())
	return err
}

// predictionHeld says which profiles the fits leave out, and when load is
// at or above what a profile the system did not hold achieved: its
// capacity was reached below that load.
func predictionHeld(b *strings.Builder, in *analysis.Insights, load float64, at string) {
	if left := leftOutOfFits(in, func(s string) string { return "`" + s + "`" }); left != "" {
		fmt.Fprintf(b, "\n**Left out of the fits:** %s: the system did not hold their load, or the machine set their figures.\n", left)
	}
	if t, l, ok := in.Unheld(); ok && load >= l {
		fmt.Fprintf(b, "\n**Beyond the capacity measured:** the system did not hold the load of profile `%s`, of which it achieved %s (%s): "+
			"its capacity was reached below that load, so %s is a load it has not been seen to hold, and the fits say nothing of it.\n",
			t.Size, LoadValueText(l, in.Load), t.Held.Why(), at)
	}
}

// predictionTable writes a row per prediction and its warnings, and
// returns the requests and limits as a size named at. outside says the
// load is outside every load measured, which the report has said once.
func predictionTable(b *strings.Builder, at string, preds []analysis.ScalingPrediction, outside bool) analysis.TShirt {
	b.WriteString("\n| Component | Resource | Predicted P99 | 95 % prediction interval | Request | Limit | Fit |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	rows := map[string]*analysis.TShirtRow{}
	var order []string
	var ws []string
	for _, p := range preds {
		sc, f := p.Scaling, sizeText
		what := "memory"
		if sc.Metric == analysis.MetricCPU {
			what, f = "CPU", cores
		}
		interval := "–"
		if !math.IsNaN(p.Prediction.Low) {
			interval = atLeastZero(p.Prediction.Low, f) + " – " + atLeastZero(p.Prediction.High, f)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s (R² %s) |\n", sc.Component, what, atLeastZero(p.Prediction.Value, f), interval,
			qty(p.Request), qty(p.Limit), sc.Verdict(), r2Text(sc.Fit))
		pw := p.Prediction.Warnings
		if outside && p.Prediction.Extrapolation && len(pw) > 0 {
			// Predict's first warning is the extrapolation, said once above. A
			// fit with fewer points than the profiles (a component without a
			// P99 in one of them) can be extrapolated at a load inside the
			// loads measured: its warning stays.
			pw = pw[1:]
		}
		for _, warn := range pw {
			ws = append(ws, fmt.Sprintf("%s %s: %s", sc.Component, what, warn))
		}
		if sc.Component == analysis.TotalComponent {
			continue
		}
		if rows[sc.Component] == nil {
			rows[sc.Component] = &analysis.TShirtRow{Component: sc.Component}
			order = append(order, sc.Component)
		}
		if r := rows[sc.Component]; sc.Metric == analysis.MetricCPU {
			r.CPURequest, r.CPULimit = p.Request, p.Limit
		} else {
			r.MemoryRequest, r.MemoryLimit = p.Request, p.Limit
		}
	}
	warnings(b, ws)
	t := analysis.TShirt{Size: at}
	for _, name := range order {
		t.Components = append(t.Components, *rows[name])
	}
	return t
}
