package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// markdownOverheads writes the "Gateway overhead" section (overheadSection).
func markdownOverheads(b *strings.Builder, ovs []*analysis.Overhead) {
	d := &doc{}
	overheadSection(d, ovs)
	d.markdown(b)
}

// overheadSection is the "Gateway overhead" section: for every workload
// that ran straight to an upstream and through a gateway, a table in the
// shape of the Bifrost report's headline (success rate, sizes, latency,
// peak memory, overhead). Nothing when there is none.
func overheadSection(d *doc, ovs []*analysis.Overhead) {
	if len(ovs) == 0 {
		return
	}
	d.headingID(2, "gateway-overhead", "Gateway overhead")
	d.para("Each workload below ran the same load straight to the upstream and through the gateway, every other request each way, in the same run; " +
		"the overhead is the latency through the gateway minus the latency straight to the upstream, at each quantile, with its 95 % interval (" + code("~") + ": the interval includes 0). " +
		"The interval covers the variation within this run; runs on a busy machine also vary from one to the next, which only repeating the run shows.")
	for _, ov := range ovs {
		overheadWorkload(d, ov)
	}
}

func overheadWorkload(d *doc, ov *analysis.Overhead) {
	d.heading(3, overheadTitle(ov))
	dr, g := ov.Direct, ov.Gateway
	facts := []item{{text: fmt.Sprintf("Operations: %s and %s; window %.1f s (%d intervals); latency from each arrival's intended start",
		code(dr.Op), code(g.Op), ov.Window.End.Sub(ov.Window.Start).Seconds(), ov.Intervals)}}
	if len(ov.Added) > 0 {
		facts = append(facts, item{text: fmt.Sprintf("Histogram resolution near the p%s latencies: %s (differences move in steps of about it)",
			quantileLabel(ov.Added[0].Quantile), dur(ov.Added[0].Resolution))})
	}
	d.list(append(facts, warningItems(ov.Warnings)...)...)
	t := &table{Head: []string{"Metric", "Direct", "Through the gateway", "Gateway overhead"}, Right: []bool{false, true, true, true}}
	t.Rows = append(t.Rows, []string{"Requests", fmt.Sprint(dr.Requests), fmt.Sprint(g.Requests), ""},
		[]string{"Success rate", pct(float64(dr.OK), float64(dr.Requests)), pct(float64(g.OK), float64(g.Requests)), ""},
		[]string{"Average request size", sizeText(dr.RequestBytes), sizeText(g.RequestBytes), ""},
		[]string{"Average response size", sizeText(dr.ResponseBytes), sizeText(g.ResponseBytes), ""},
		[]string{"Average latency", sideDur(dr.Latency.Mean, dr.Latency.Count == 0), sideDur(g.Latency.Mean, g.Latency.Count == 0), ""})
	for _, a := range ov.Added {
		t.Rows = append(t.Rows, []string{"p" + quantileLabel(a.Quantile) + " latency", sideDur(a.Direct, a.NoDirect), sideDur(a.Gateway, a.NoGateway), addedText(a)})
	}
	comp := "gateway"
	if ov.Component != "" {
		comp = code(ov.Component)
	}
	if ov.HasResources {
		t.Rows = append(t.Rows, []string{"Peak memory of " + comp, "", memoryText(ov), ""},
			[]string{"CPU P99 of " + comp + " (cores)", "", cpuText(ov), ""})
	}
	d.table(t)
	if len(ov.Added) > 0 {
		a := ov.Added[0]
		d.para(strong(fmt.Sprintf("Gateway overhead at p%s: %s", quantileLabel(a.Quantile), addedText(a))))
	}
	interval := fmt.Sprintf("Interval: %s.", ov.Method)
	if ov.HasResources {
		interval += fmt.Sprintf(" Peak memory is the maximum of %s, CPU the P99 of %s, over the phase's resource window.",
			dash(ov.MemoryMetric), dash(ov.CPUMetric))
	}
	d.para(interval)
}

// terminalOverheads gives each gateway overhead's headline, as the
// report's section closes it: the added latency at each quantile.
func terminalOverheads(w io.Writer, ovs []*analysis.Overhead) {
	for _, ov := range ovs {
		var parts []string
		for _, a := range ov.Added {
			parts = append(parts, "p"+quantileLabel(a.Quantile)+" "+addedText(a))
		}
		if len(parts) == 0 {
			continue
		}
		name := ov.Workload.Name
		if ov.Component != "" {
			name += " through " + ov.Component
		}
		if a := ov.Added[0]; !a.HasValue() {
			parts = []string{addedText(a)} // the same at every quantile
		}
		fmt.Fprintf(w, "%s: gateway overhead %s\n", name, strings.Join(parts, ", "))
	}
}

// overheadTitle names the workload with its profile and cell.
func overheadTitle(ov *analysis.Overhead) string {
	w := ov.Workload
	s := "Workload " + code(w.DisplayName())
	if w.Profile != "" {
		s += ", profile " + code(w.Profile)
	}
	if ov.Component != "" {
		s += ", gateway " + code(ov.Component)
	}
	return s
}

func cpuText(ov *analysis.Overhead) string {
	if ov.CPUMetric == "" {
		return "–"
	}
	return p99Text(ov.CPU, num3)
}

func memoryText(ov *analysis.Overhead) string {
	if ov.MemoryMetric == "" {
		return "–"
	}
	return sizeText(ov.Memory.Max)
}

// sideDur is a side's latency quantile, or "–" when the side had no
// successful request to take one of.
func sideDur(d time.Duration, none bool) string {
	if none {
		return "–"
	}
	return dur(d)
}

// addedText is "+2.01 ms (95 % CI +1.98 to +2.04 ms)", or "~" with the
// figures in parentheses when the interval includes 0 or there is none,
// or "no figure" and why when a side had no successful request.
func addedText(a analysis.Added) string {
	switch {
	case a.NoGateway && a.NoDirect:
		return "no figure (no request succeeded either way)"
	case a.NoGateway:
		return "no figure (no request through the gateway succeeded)"
	case a.NoDirect:
		return "no figure (no request straight to the upstream succeeded)"
	case !a.HasInterval:
		return fmt.Sprintf("~ (%s, no interval)", signedDur(a.Value))
	}
	ci := fmt.Sprintf("95 %% CI %s to %s", signedDur(a.Low), signedDur(a.High))
	if a.Significance != analysis.Significant {
		return fmt.Sprintf("~ (%s, %s)", signedDur(a.Value), ci)
	}
	return fmt.Sprintf("%s (%s)", signedDur(a.Value), ci)
}

// signedDur is a latency difference with its sign: "+2.01 ms", "−40 µs", "0".
func signedDur(d time.Duration) string {
	switch {
	case d > 0:
		return "+" + dur(d)
	case d < 0:
		return "−" + dur(-d)
	}
	return "0"
}

// quantileLabel is "50" for 0.5, "99.9" for 0.999.
func quantileLabel(q float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.1f", q*100), "0"), ".")
}

// jsonOverhead is one entry of summary.json's "gateway_overhead".
type jsonOverhead struct {
	Workload     string           `json:"workload"`
	Cell         int              `json:"cell"`
	Profile      string           `json:"profile"`
	Component    string           `json:"component,omitempty"`
	Window       jsonSpan         `json:"window"`
	Intervals    int              `json:"intervals"`
	Batches      int              `json:"batches"`
	Direct       jsonOverheadSide `json:"direct"`
	Gateway      jsonOverheadSide `json:"gateway"`
	Added        []jsonAdded      `json:"added_latency_ms"`
	CPU          *jsonStat        `json:"gateway_cpu_cores,omitempty"`
	CPUMetric    string           `json:"gateway_cpu_metric,omitempty"`
	Memory       *jsonStat        `json:"gateway_memory_bytes,omitempty"`
	MemoryMetric string           `json:"gateway_memory_metric,omitempty"`
	Method       string           `json:"method"`
	Warnings     []string         `json:"warnings"`
}

type jsonOverheadSide struct {
	Op                string  `json:"operation"`
	Requests          int64   `json:"requests"`
	OK                int64   `json:"ok"`
	SuccessRate       float64 `json:"success_rate"`
	MeanRequestBytes  float64 `json:"mean_request_bytes"`
	MeanResponseBytes float64 `json:"mean_response_bytes"`
	Latency           *jsonQ  `json:"latency_ms"` // null when no request succeeded
}

// jsonAdded is one quantile's added latency; low and high are null when
// there is no interval, and a side's quantile and the value null when a
// side had no successful request.
type jsonAdded struct {
	Quantile    float64  `json:"quantile"`
	Direct      *float64 `json:"direct"`
	Gateway     *float64 `json:"gateway"`
	Value       *float64 `json:"value"`
	Low         *float64 `json:"low"`
	High        *float64 `json:"high"`
	Significant bool     `json:"significant"`
	Resolution  float64  `json:"resolution"`
}

func toJSONOverheads(ovs []*analysis.Overhead) []jsonOverhead {
	out := []jsonOverhead{}
	for _, ov := range ovs {
		w := ov.Workload
		jo := jsonOverhead{Workload: w.Name, Cell: w.Cell, Profile: w.Profile, Component: ov.Component,
			Window: span(ov.Window), Intervals: ov.Intervals, Batches: ov.Batches,
			Direct: toJSONSide(ov.Direct), Gateway: toJSONSide(ov.Gateway), Added: []jsonAdded{},
			Method: ov.Method, Warnings: append([]string{}, ov.Warnings...)}
		for _, a := range ov.Added {
			ja := jsonAdded{Quantile: a.Quantile, Direct: optMS(a.Direct, !a.NoDirect), Gateway: optMS(a.Gateway, !a.NoGateway),
				Value: optMS(a.Value, a.HasValue()), Significant: a.Significance == analysis.Significant, Resolution: ms(a.Resolution)}
			if a.HasInterval {
				lo, hi := ms(a.Low), ms(a.High)
				ja.Low, ja.High = &lo, &hi
			}
			jo.Added = append(jo.Added, ja)
		}
		if ov.HasResources && ov.CPUMetric != "" {
			s := toJSONStat(ov.CPU)
			jo.CPU, jo.CPUMetric = &s, ov.CPUMetric
		}
		if ov.HasResources && ov.MemoryMetric != "" {
			s := toJSONStat(ov.Memory)
			jo.Memory, jo.MemoryMetric = &s, ov.MemoryMetric
		}
		out = append(out, jo)
	}
	return out
}

// optMS is d in milliseconds, or nil when it is no figure.
func optMS(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	v := ms(d)
	return &v
}

func toJSONSide(s analysis.OverheadSide) jsonOverheadSide {
	j := jsonOverheadSide{Op: s.Op, Requests: s.Requests, OK: s.OK, SuccessRate: s.SuccessRate,
		MeanRequestBytes: round6(s.RequestBytes), MeanResponseBytes: round6(s.ResponseBytes)}
	if s.Latency.Count > 0 { // a side with no success has no latency, not one of 0
		q := toJSONQ(s.Latency)
		j.Latency = &q
	}
	return j
}
