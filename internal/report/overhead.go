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
	if len(ovs) > 1 {
		d.heading(3, "Overhead by load")
		d.para("Each row is one workload above: the load it ran at, the requests per second through the gateway over its window, " +
			"the overhead at p50 and p99 of the whole request and of the time to first token (streams), and the gateway's mean CPU per 1,000 requests/s through it.")
		d.table(overheadByLoad(ovs))
	}
}

// overheadByLoad is a row per overhead: how the gateway's cost moves with
// the load (published figures differ tenfold between 1 and 10 requests at
// once).
func overheadByLoad(ovs []*analysis.Overhead) *table {
	t := &table{Head: []string{"Workload", "Load", "Through the gateway", "Latency p50", "Latency p99", "TTFT p50", "TTFT p99", "CPU per 1,000/s (cores)"},
		Right: []bool{false, true, true, true, true, true, true, true}}
	for _, ov := range ovs {
		w := ov.Workload
		load := "–"
		switch {
		case w.Model == "closed" && w.MaxVUs == 1:
			load = "1 VU"
		case w.Model == "closed":
			load = fmt.Sprintf("%d VUs", w.MaxVUs)
		case w.TargetRate > 0:
			load = num3(w.TargetRate) + "/s"
		}
		cpu := "–"
		if ov.CPUPerKRPS > 0 {
			cpu = num3(ov.CPUPerKRPS)
		}
		row := []string{w.Name, load, num3(ov.GatewayRate()) + "/s", addedAt(ov.Added, 0.5), addedAt(ov.Added, 0.99),
			addedAt(ov.TTFT, 0.5), addedAt(ov.TTFT, 0.99), cpu}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// addedAt is the added figure at quantile q, "–" when there is none.
func addedAt(adds []analysis.Added, q float64) string {
	for _, a := range adds {
		if a.Quantile == q {
			return addedText(a)
		}
	}
	return "–"
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
	for _, a := range ov.TTFT {
		t.Rows = append(t.Rows, []string{"p" + quantileLabel(a.Quantile) + " time to first token", dur(a.Direct), dur(a.Gateway), addedText(a)})
	}
	comp := "gateway"
	if ov.Component != "" {
		comp = code(ov.Component)
	}
	if ov.HasResources {
		t.Rows = append(t.Rows, []string{"Peak memory of " + comp, "", memoryText(ov), ""},
			[]string{"CPU P99 of " + comp + " (cores)", "", cpuText(ov), ""})
		if ov.CPUPerKRPS > 0 {
			t.Rows = append(t.Rows, []string{"Mean CPU of " + comp + " per 1,000 requests/s (cores)", "", num3(ov.CPUPerKRPS), ""})
		}
	}
	d.table(t)
	if h := overheadHeadline(ov); h != "" {
		d.para(strong(h))
	}
	interval := fmt.Sprintf("Interval: %s.", ov.Method)
	if ov.HasResources {
		interval += fmt.Sprintf(" Peak memory is the maximum of %s, CPU the P99 of %s, over the phase's resource window.",
			dash(ov.MemoryMetric), dash(ov.CPUMetric))
	}
	d.para(interval)
}

// overheadHeadline is the section's closing line: the added latency at
// p50 and, for streams, the added time to first token at p50 and p99,
// which a gateway holding the first chunk raises far more.
func overheadHeadline(ov *analysis.Overhead) string {
	if len(ov.Added) == 0 {
		return ""
	}
	a := ov.Added[0]
	h := fmt.Sprintf("Gateway overhead at p%s: %s", quantileLabel(a.Quantile), addedText(a))
	if t := ttftParts(ov); len(t) > 0 {
		h += "; time to first token " + strings.Join(t, ", ")
	}
	return h
}

// ttftParts are the added time to first token at p50 and p99.
func ttftParts(ov *analysis.Overhead) []string {
	var parts []string
	for _, a := range ov.TTFT {
		if a.Quantile == 0.5 || a.Quantile == 0.99 {
			parts = append(parts, "p"+quantileLabel(a.Quantile)+" "+addedText(a))
		}
	}
	return parts
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
		line := name + ": gateway overhead " + strings.Join(parts, ", ")
		if t := ttftParts(ov); len(t) > 0 {
			line += "; time to first token " + strings.Join(t, ", ")
		}
		fmt.Fprintln(w, line)
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
	AddedTTFT    []jsonAdded      `json:"added_ttft_ms,omitempty"`
	CPUPerKRPS   *float64         `json:"gateway_cpu_cores_per_1k_rps,omitempty"`
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
			Direct: toJSONSide(ov.Direct), Gateway: toJSONSide(ov.Gateway),
			Method: ov.Method, Warnings: append([]string{}, ov.Warnings...)}
		jo.Added = toJSONAdded(ov.Added)
		if ov.TTFT != nil {
			jo.AddedTTFT = toJSONAdded(ov.TTFT)
		}
		if ov.CPUPerKRPS > 0 {
			v := round6(ov.CPUPerKRPS)
			jo.CPUPerKRPS = &v
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

func toJSONAdded(adds []analysis.Added) []jsonAdded {
	out := []jsonAdded{}
	for _, a := range adds {
		ja := jsonAdded{Quantile: a.Quantile, Direct: optMS(a.Direct, !a.NoDirect), Gateway: optMS(a.Gateway, !a.NoGateway),
			Value: optMS(a.Value, a.HasValue()), Significant: a.Significance == analysis.Significant, Resolution: ms(a.Resolution)}
		if a.HasInterval {
			lo, hi := ms(a.Low), ms(a.High)
			ja.Low, ja.High = &lo, &hi
		}
		out = append(out, ja)
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
