package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/stats"
)

// GateState is the outcome of one gate.
type GateState uint8

const (
	// GateFail: the figure is on the wrong side of the threshold.
	GateFail GateState = iota
	// GatePass: the figure is on the right side, and the sample supports it.
	GatePass
	// GateInsufficient: the sample can't support the figure or the pass
	// (too few requests for the quantile or the rate's threshold, no such
	// workload or operation). It is not a pass: a CI gate must not pass on
	// no data.
	GateInsufficient
)

func (s GateState) String() string {
	switch s {
	case GatePass:
		return "pass"
	case GateInsufficient:
		return "insufficient data"
	}
	return "fail"
}

// Verdict is one gate evaluated against one workload (or against the run,
// for a figure the run supplies).
type Verdict struct {
	Expr     string
	Gate     slo.Gate
	Workload string  // the workload the figure is of; "" for a figure the run supplies
	Measured string  // the figure with its unit, e.g. "183ms", "0.05%", "957/s"; "" when there is none
	Value    float64 // in the metric's unit; NaN when there is no figure
	State    GateState
	Pass     bool // State == GatePass
	Note     string
}

// gateMeasures measures each built-in metric (slo.Metrics) in a scope.
var gateMeasures = map[string]func(gateScope) gateFigure{
	"p50":                latencyQuantile(0.50),
	"p90":                latencyQuantile(0.90),
	"p99":                latencyQuantile(0.99),
	"p999":               latencyQuantile(0.999),
	"max":                gateLatencyMax,
	"mean":               gateLatencyMean,
	"ttfb_p50":           ttfbQuantile(0.50),
	"ttfb_p99":           ttfbQuantile(0.99),
	"ttft_p50":           measureQuantile(stats.TTFT, 0.50),
	"ttft_p99":           measureQuantile(stats.TTFT, 0.99),
	"ttst_p50":           measureQuantile(stats.TTST, 0.50),
	"ttst_p99":           measureQuantile(stats.TTST, 0.99),
	"itl_p50":            measureQuantile(stats.ITL, 0.50),
	"itl_p99":            measureQuantile(stats.ITL, 0.99),
	"tpot_p50":           measureQuantile(stats.TPOT, 0.50),
	"tpot_p99":           measureQuantile(stats.TPOT, 0.99),
	"ntpot_p50":          measureQuantile(stats.NTPOT, 0.50),
	"ntpot_p99":          measureQuantile(stats.NTPOT, 0.99),
	"output_tokens_rate": gateOutputTokensRate,
	"goodput":            gateGoodput,
	"goodput_rate":       gateGoodputRate,
	"error_rate":         gateErrorRate,
	"success_rate":       gateSuccessRate,
	"rate":               gateRate,
	"requests":           gateRequests,
	"errors":             gateErrors,
	"dropped":            gateDropped,
}

// gateScope is the workload (and operation) a gate's figure is read from.
type gateScope struct {
	sum *Summary
	op  *Op // nil for every operation
}

// gateFigure is a measured value with the sample size it rests on; why says
// why there is no figure, note what a reader should know of the one there
// is.
type gateFigure struct {
	v    float64
	n    int64
	why  string
	note string
}

// quantiles are the scope's latency (or TTFB) quantiles: the operation's,
// or those of every operation's histograms merged.
func (sc gateScope) quantiles(of func(*Op) Quantiles, hist func(*stats.OpStats) *stats.Hist) (Quantiles, string) {
	if sc.op != nil {
		return of(sc.op), ""
	}
	if len(sc.sum.Ops) == 1 {
		return of(&sc.sum.Ops[0]), ""
	}
	merged := stats.NewHist()
	for _, op := range sc.sum.Ops {
		if op.Whole == nil {
			return Quantiles{}, "the operations' histograms are not available to merge"
		}
		merged.Merge(hist(op.Whole))
	}
	return QuantilesOf(merged), ""
}

func latencyOf(op *Op) Quantiles               { return op.Latency }
func latencyHist(s *stats.OpStats) *stats.Hist { return s.Latency }
func ttfbOf(op *Op) Quantiles                  { return op.TTFB }
func ttfbHist(s *stats.OpStats) *stats.Hist    { return s.TTFB }

// pickQuantile is quantile q of qs (one of the quantiles a Quantiles holds).
func pickQuantile(qs Quantiles, q float64) time.Duration {
	switch q {
	case 0.5:
		return qs.P50
	case 0.9:
		return qs.P90
	case 0.99:
		return qs.P99
	}
	return qs.P999
}

func quantileFigure(q float64, what string, of func(*Op) Quantiles, hist func(*stats.OpStats) *stats.Hist) func(gateScope) gateFigure {
	return func(sc gateScope) gateFigure {
		qs, why := sc.quantiles(of, hist)
		if why != "" {
			return gateFigure{why: why}
		}
		if need := MinCountFor(q); qs.Count < need {
			return gateFigure{n: qs.Count, why: fmt.Sprintf("p%s needs at least %d %s; the window has %d", quantileName(q), need, what, qs.Count)}
		}
		return gateFigure{v: pickQuantile(qs, q).Seconds(), n: qs.Count}
	}
}

func latencyQuantile(q float64) func(gateScope) gateFigure {
	f := quantileFigure(q, "latencies of successful requests", latencyOf, latencyHist)
	return func(sc gateScope) gateFigure { return sc.latencyNote(f(sc)) }
}

// latencyNote says what a latency figure is over, when requests failed:
// the successful ones only, or, from a store written before results
// format 3, every one.
func (sc gateScope) latencyNote(f gateFigure) gateFigure {
	reqs, ok := sc.counts()
	switch {
	case f.why != "" || reqs == ok:
	case sc.latencyOfAll():
		f.note = fmt.Sprintf("latency of all %d requests, %d of them failed: the run's store (results format 2 or older) did not keep failed requests apart", reqs, reqs-ok)
	default:
		f.note = fmt.Sprintf("over the %d successful requests; %d of %d failed, see error_rate", ok, reqs-ok, reqs)
	}
	return f
}

// latencyOfAll reports whether the scope's latency holds failed requests
// too (Op.LatencyOfAll).
func (sc gateScope) latencyOfAll() bool {
	if sc.op != nil {
		return sc.op.LatencyOfAll
	}
	return sc.sum.LatencyOfAll
}

func ttfbQuantile(q float64) func(gateScope) gateFigure {
	return quantileFigure(q, "TTFB samples", ttfbOf, ttfbHist)
}

// measureQuantile is quantile q of a driver's measure m, e.g. the time to
// first token.
func measureQuantile(m stats.Measure, q float64) func(gateScope) gateFigure {
	return quantileFigure(q, m.String()+" values",
		func(op *Op) Quantiles { return op.Measures[m] },
		func(s *stats.OpStats) *stats.Hist { return s.Measures[m] })
}

func gateOutputTokensRate(sc gateScope) gateFigure {
	if sc.sum.Seconds <= 0 {
		return gateFigure{why: "the window is empty"}
	}
	ops := sc.sum.Ops
	if sc.op != nil {
		ops = []Op{*sc.op}
	}
	var n int64
	for _, op := range ops {
		n += op.Counters[stats.OutputTokens]
	}
	if n == 0 {
		return gateFigure{why: "no output tokens were counted in the window"}
	}
	return gateFigure{v: float64(n) / sc.sum.Seconds, n: n}
}

// goodput is the scope's goodput, or why there is none.
func (sc gateScope) goodput() (Goodput, string) {
	g, ok := sc.sum.Goodput()
	if sc.op != nil {
		g, ok = sc.op.Goodput()
	}
	if !ok {
		return g, "no request was judged for goodput: give goodput bounds in the openai params"
	}
	return g, ""
}

func gateGoodput(sc gateScope) gateFigure {
	g, why := sc.goodput()
	return gateFigure{v: g.Share, n: g.Judged, why: why}
}

func gateGoodputRate(sc gateScope) gateFigure {
	g, why := sc.goodput()
	if why == "" && sc.sum.Seconds <= 0 {
		why = "the window is empty"
	}
	return gateFigure{v: g.Rate, n: g.Judged, why: why}
}

func latencyStat(of func(Quantiles) time.Duration) func(gateScope) gateFigure {
	return func(sc gateScope) gateFigure {
		qs, why := sc.quantiles(latencyOf, latencyHist)
		if why == "" && qs.Count == 0 {
			why = "no successful requests in the window"
		}
		return sc.latencyNote(gateFigure{v: of(qs).Seconds(), n: qs.Count, why: why})
	}
}

func gateLatencyMax(sc gateScope) gateFigure {
	return latencyStat(func(q Quantiles) time.Duration { return q.Max })(sc)
}

func gateLatencyMean(sc gateScope) gateFigure {
	return latencyStat(func(q Quantiles) time.Duration { return q.Mean })(sc)
}

// counts are the scope's requests and successful requests.
func (sc gateScope) counts() (int64, int64) {
	if sc.op != nil {
		return sc.op.Requests, sc.op.OK
	}
	var reqs, ok int64
	for _, op := range sc.sum.Ops {
		reqs, ok = reqs+op.Requests, ok+op.OK
	}
	return reqs, ok
}

func gateErrorRate(sc gateScope) gateFigure {
	reqs, ok := sc.counts()
	if reqs == 0 {
		return gateFigure{why: "no requests in the window"}
	}
	return gateFigure{v: float64(reqs-ok) / float64(reqs), n: reqs}
}

func gateSuccessRate(sc gateScope) gateFigure {
	f := gateErrorRate(sc)
	if reqs, ok := sc.counts(); f.why == "" {
		f.v = float64(ok) / float64(reqs) // not 1 − error_rate, which rounds twice
	}
	return f
}

func gateRate(sc gateScope) gateFigure {
	if sc.sum.Seconds <= 0 {
		return gateFigure{why: "the window is empty"}
	}
	reqs, _ := sc.counts()
	return gateFigure{v: float64(reqs) / sc.sum.Seconds, n: reqs}
}

func windowCount(v func(gateScope) int64) func(gateScope) gateFigure {
	return func(sc gateScope) gateFigure {
		if sc.sum.Intervals == 0 {
			return gateFigure{why: "no intervals in the window"}
		}
		return gateFigure{v: float64(v(sc)), n: int64(sc.sum.Intervals)}
	}
}

func gateRequests(sc gateScope) gateFigure {
	return windowCount(func(sc gateScope) int64 { r, _ := sc.counts(); return r })(sc)
}

func gateErrors(sc gateScope) gateFigure {
	return windowCount(func(sc gateScope) int64 { r, ok := sc.counts(); return r - ok })(sc)
}

func gateDropped(sc gateScope) gateFigure {
	return windowCount(func(sc gateScope) int64 { return sc.sum.Dropped })(sc)
}

// Supplied is a figure the run supplies for gates besides the built-in
// metrics, such as lost_samples from a read-back check. Why, when not
// empty, says why there is no figure (a read-back that got no answer):
// a gate on it then has insufficient data, never a pass.
type Supplied struct {
	Value float64
	Why   string
}

// EvaluateGates evaluates every gate against the workloads it applies to:
// those its workload label names (all when none), and of those, with an op
// label, the ones that have that operation. A gate on a figure the run
// supplies is evaluated once against extra. A gate that applies to no
// workload gives one GateInsufficient verdict. A metric that is neither
// built in nor in extra is an error that lists the known ones.
func EvaluateGates(gates []slo.Gate, sums []*Summary, extra map[string]Supplied) ([]Verdict, error) {
	var out []Verdict
	for _, g := range gates {
		kind, builtin := slo.KindOf(g.Metric)
		if !builtin {
			v, ok := extra[g.Metric]
			if !ok {
				return nil, unknownMetric(g, extra)
			}
			out = append(out, judgeGate(g, "", kind, gateFigure{v: v.Value, why: v.Why}))
			continue
		}
		scopes, why := gateScopes(g, sums)
		if why != "" {
			out = append(out, Verdict{Expr: g.Expr, Gate: g, Value: math.NaN(), State: GateInsufficient, Note: why})
			continue
		}
		for _, sc := range scopes {
			v := judgeGate(g, sc.sum.Workload.Name, kind, gateMeasures[g.Metric](sc))
			if sc.sum.ClientBound && v.State != GateInsufficient {
				v.Note = strings.TrimPrefix(v.Note+"; "+clientBoundNote(sc.sum), "; ")
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func unknownMetric(g slo.Gate, extra map[string]Supplied) error {
	known := slo.Metrics()
	var run []string
	for k := range extra {
		run = append(run, k)
	}
	sort.Strings(run)
	msg := fmt.Sprintf("cannot evaluate SLO gate %q: unknown metric %q: known metrics are %s", g.Expr, g.Metric, strings.Join(known, ", "))
	if len(run) > 0 {
		msg += "; the run supplies " + strings.Join(run, ", ")
	} else {
		msg += "; the run supplies no other figures"
	}
	return fmt.Errorf("%s", msg)
}

// gateScopes are the workloads (and operations) g applies to, or why
// there are none.
func gateScopes(g slo.Gate, sums []*Summary) ([]gateScope, string) {
	var out []gateScope
	var names, ops []string
	matched := false
	for _, s := range sums {
		names = append(names, s.Workload.Name)
		if g.Workload != "" && g.Workload != s.Workload.Name && g.Workload != s.Workload.DisplayName() {
			continue
		}
		matched = true
		if g.Op == "" {
			out = append(out, gateScope{sum: s})
			continue
		}
		for i := range s.Ops {
			ops = append(ops, s.Ops[i].Name)
			if s.Ops[i].Name == g.Op {
				out = append(out, gateScope{sum: s, op: &s.Ops[i]})
			}
		}
	}
	switch {
	case len(out) > 0:
		return out, ""
	case len(sums) == 0:
		return nil, "no workloads in the run"
	case !matched:
		return nil, fmt.Sprintf("no workload %q in the run (workloads: %s)", g.Workload, strings.Join(names, ", "))
	}
	slices.Sort(ops)
	return nil, fmt.Sprintf("no operation %q in %s (operations: %s)", g.Op, workloadWords(g.Workload), strings.Join(slices.Compact(ops), ", "))
}

func workloadWords(w string) string {
	if w == "" {
		return "any workload"
	}
	return "workload " + strconv.Quote(w)
}

// judgeGate compares a figure with g's threshold.
func judgeGate(g slo.Gate, workload string, kind slo.Kind, f gateFigure) Verdict {
	v := Verdict{Expr: g.Expr, Gate: g, Workload: workload, Value: math.NaN()}
	if f.why != "" {
		v.State, v.Note = GateInsufficient, f.why
		return v
	}
	v.Value, v.Measured, v.Note = f.v, kind.Format(f.v), f.note
	if !compare(g.Cmp, f.v, g.Threshold) {
		return v
	}
	if need := passNeeds(g, kind); f.n < need {
		v.State = GateInsufficient
		v.Note = fmt.Sprintf("%s %s passes, but %d requests can't show a rate that small: it needs at least %d", g.Metric, v.Measured, f.n, need)
		return v
	}
	v.State, v.Pass = GatePass, true
	return v
}

// passNeeds is the fewest requests a passing rate gate rests on: a rate
// held under a threshold t (error_rate < t, success_rate or goodput > 1 − t) needs
// ⌈1/t⌉ requests, so that a single failure could have crossed it.
func passNeeds(g slo.Gate, kind slo.Kind) int64 {
	if kind != slo.KindFraction {
		return 0
	}
	t := g.Threshold
	if g.Metric == "success_rate" || g.Metric == "goodput" {
		t = 1 - t
	}
	// equivalent mutant on amd64: t < 0. At t 0 (error_rate <= 0) it needs
	// ⌈1/0⌉ = +Inf, which amd64 converts to the least int64; a rate rests on
	// at least 1 request, so both needs are met (arm64 saturates +Inf, and
	// the test of "error_rate <= 0" fails there)
	if t <= 0 || t >= 1 { // equivalent mutant: t > 1, ⌈1/1⌉ is 1 too
		return 1
	}
	return int64(math.Ceil(1/t - 1e-9))
}

func compare(cmp string, v, t float64) bool {
	switch cmp {
	case "<":
		return v < t
	case "<=":
		return v <= t
	case ">":
		return v > t
	case ">=":
		return v >= t
	case "==":
		return v == t
	case "!=":
		return v != t
	}
	return false
}

// clientBoundNote says of a gate's figure that the generator was the limit,
// and why.
func clientBoundNote(s *Summary) string {
	if s.ClientWhy == "" {
		return "client-bound: the figure may show the generator's limit"
	}
	return "client-bound (" + s.ClientWhy + "): the figure may show the generator's limit"
}
