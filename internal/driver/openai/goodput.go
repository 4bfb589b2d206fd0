package openaidriver

import (
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// Goodput are the bounds a request must meet to count toward goodput, as
// vLLM's benchmark and AIPerf define it: a request is good when it
// succeeded and each figure a bound is given for is at most that bound.
// The figures are the request's own, one each:
//
//   - TTFT: from the start of the request to its first content event; a
//     stream without content has none, and is not good.
//   - ITL: the request's mean inter-token latency, (last content event −
//     first) / (content events − 1), as guidellm's and AIPerf's
//     per-request ITL (not each gap: a bound on the worst gap is a gate on
//     itl_p99 of the whole run).
//   - TPOT: the request's time per output token, (end of the stream −
//     first content event) / (output tokens − 1), vLLM's per-request TPOT
//     and the TPOT measure's value.
//   - Latency: from the start of the request to the end of its answer, as
//     the driver sees it (from when it was sent: in the open model a late
//     dispatch adds the scheduler lag to the latency the report shows, not
//     to this one).
//
// A request of fewer than two tokens has no ITL or TPOT and meets those
// bounds (nothing could exceed them), as in vLLM. TTFT, ITL and TPOT need
// a stream.
type Goodput struct {
	TTFT    time.Duration `yaml:"ttft"`
	ITL     time.Duration `yaml:"itl"`
	TPOT    time.Duration `yaml:"tpot"`
	Latency time.Duration `yaml:"latency"`
}

// problems lists what is wrong with g, for a config that streams or not.
func (g *Goodput) problems(stream bool) []error {
	if g == nil {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) {
		errs = append(errs, driver.ParamErrorf("goodput", "goodput: "+format, a...))
	}
	if *g == (Goodput{}) {
		add("give at least one bound: ttft, itl, tpot or latency")
	}
	var streamed []string
	for _, b := range g.bounds() {
		if b.d < 0 {
			add("%s %v is negative", b.name, b.d)
		}
		if b.d != 0 && b.name != "latency" {
			streamed = append(streamed, b.name)
		}
	}
	if len(streamed) > 0 && !stream {
		add("%s need a stream (stream: true): a whole answer shows no token before it ends", strings.Join(streamed, ", "))
	}
	return errs
}

type bound struct {
	name string
	d    time.Duration
}

// bounds are g's bounds by name, in order.
func (g *Goodput) bounds() []bound {
	return []bound{{"ttft", g.TTFT}, {"itl", g.ITL}, {"tpot", g.TPOT}, {"latency", g.Latency}}
}

// String lists the bounds given: "ttft ≤ 200ms, itl ≤ 50ms (a request's mean)".
func (g *Goodput) String() string {
	var parts []string
	for _, b := range g.bounds() {
		if b.d == 0 {
			continue
		}
		s := b.name + " ≤ " + b.d.String()
		if b.name == "itl" {
			s += " (a request's mean)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// figures are one request's figures, for goodput.
type figures struct {
	ttft, itl, tpot   time.Duration
	hasTTFT, hasSteps bool // a first token; two tokens or more (ITL and TPOT)
}

// met reports whether a successful request with figures f, which took
// latency, meets every bound.
func (g *Goodput) met(f figures, latency time.Duration) bool {
	switch {
	case g.Latency > 0 && latency > g.Latency:
		return false
	case g.TTFT > 0 && (!f.hasTTFT || f.ttft > g.TTFT):
		return false
	case f.hasSteps && g.ITL > 0 && f.itl > g.ITL:
		return false
	case f.hasSteps && g.TPOT > 0 && f.tpot > g.TPOT:
		return false
	}
	return true
}

// judge counts a request toward goodput when it succeeded and met every
// bound; Do has counted it as judged already.
func (d *Driver) judge(x *exchange, f figures, r *driver.Result) {
	took := time.Since(x.start)
	if n := r.Counters[stats.OutputTokens]; r.Class == stats.OK && n > 0 {
		r.Measures = append(r.Measures, stats.Timing{Measure: stats.NTPOT, D: took / time.Duration(n)})
	}
	g := d.cfg.Goodput
	if g == nil || r.Class != stats.OK || !g.met(f, took) {
		return
	}
	r.Counters[stats.Goodput] = 1
	d.tally.good.Add(1)
}
