// Package analysis turns recorded intervals and resource samples into the
// figures reports print: the steady-state window, per-operation rates and
// percentiles from merged histograms (never averaged), errors by class,
// dropped arrivals, per-component resource P99/Max/Avg with totals, and
// whether the generator itself was the limit; and from those, sizing
// (requests and limits, t-shirt sizes), scaling fits across profiles,
// comparisons with confidence intervals, SLO verdicts and plain-language
// observations. Every figure carries the warnings a reader needs.
package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
)

// Workload is what analysis needs to know of one workload besides its intervals.
type Workload struct {
	Name    string // unique in the run
	Short   string // display name within its profile; "" means Name
	Cell    int    // the matrix cell it ran in; 0 in a run without a plan
	Profile string // the profile it belongs to; "" in a run without a plan
	Driver  string
	Model   string
	Target  string
	// Params are the driver's parameters as the run stored them (JSON,
	// credentials redacted): two workloads with the same Params differ in
	// their load alone.
	Params     string
	TargetRate float64   // ops/s the schedule asked for over the window (a ramping schedule's mean over it); 0 for the closed model
	Schedule   *Schedule // the ramping schedule of a workload with stages; nil for a constant rate or concurrency
	VUsMin     int
	VUsMax     int
	Start      time.Time
	LoadEnd    time.Time
	End        time.Time
	Scheduled  uint64 // arrivals the open model's dispatcher issued
	Unissued   uint64 // arrivals due that it had not issued when the schedule ended
	MaxVUs     int
	Window     Window // proposed by the engine or set by the user
}

// Window is the span statistics are taken over.
type Window struct {
	Start time.Time
	End   time.Time
	Rule  string
}

// Quantiles are the latency figures of one histogram.
type Quantiles struct {
	Count                          int64
	P50, P90, P99, P999, Max, Mean time.Duration
	Min                            time.Duration
}

// QuantilesOf reads the report's quantiles from h.
func QuantilesOf(h *stats.Hist) Quantiles {
	return Quantiles{
		Count: h.Count(),
		P50:   h.Quantile(0.50), P90: h.Quantile(0.90), P99: h.Quantile(0.99), P999: h.Quantile(0.999),
		Max: h.Max(), Mean: h.Mean(), Min: h.Min(),
	}
}

// ErrorCount is one failure class with its count and one sample message.
type ErrorCount struct {
	Class  string `json:"class"`
	Count  int64  `json:"count"`
	Sample string `json:"sample,omitempty"`
}

// Op is the summary of one operation over the window.
type Op struct {
	Name        string
	Requests    int64
	OK          int64
	SuccessRate float64 // OK / Requests
	Rate        float64 // completed operations per second
	BytesSentPS float64
	BytesRecvPS float64
	// Latency, Service and TTFB are of the successful operations (class
	// OK) only, as k6's http_req_duration{expected_response:true}: the
	// headline latency, which SLO gates, comparisons and sizing use.
	Latency Quantiles // from the intended start
	Service Quantiles // from the actual start
	TTFB    Quantiles
	Connect Quantiles // new connections, whatever the outcome
	// FailedLatency is the failed operations' latency (Count 0 when none
	// failed), and AllLatency every operation's: the two histograms
	// merged exactly, equal to Latency when nothing failed.
	FailedLatency, AllLatency Quantiles
	// LatencyOfAll says Latency, Service and TTFB hold the failed
	// operations too: the figures were read from a store written before
	// results format 3, which did not keep them apart, and something
	// failed. FailedLatency is then empty.
	LatencyOfAll bool
	// Measures are the driver's other timings (time to first token,
	// inter-token latency, …) by stats.Measure; Count is 0 for those the
	// driver does not measure.
	Measures [stats.NumMeasures]Quantiles
	// Counters are the driver's counts (tokens; an HTTP answer's body
	// bytes, retries, idle closes and stray answers) in the window, by
	// stats.Counter, and CountersPS the same per second of the window.
	Counters   [stats.NumCounters]int64
	CountersPS [stats.NumCounters]float64
	Errors     []ErrorCount
	Whole      *stats.OpStats `json:"-"` // merged over the window, for charts and spectra
}

// HasFailedLatency reports whether op has failed operations' latency
// apart from its successful ones': the reports then show both, and every
// request's.
func (op *Op) HasFailedLatency() bool { return op.FailedLatency.Count > 0 }

// HasCounters reports whether the driver counted tokens of op.
func (op *Op) HasCounters() bool {
	for c, n := range op.Counters {
		if n != 0 && !stats.Counter(c).Connection() {
			return true
		}
	}
	return false
}

// HasConnections reports whether the driver counted op's answers and
// connections (the HTTP driver: stats.Counter.Connection).
func (op *Op) HasConnections() bool {
	for c, n := range op.Counters {
		if n != 0 && stats.Counter(c).Connection() {
			return true
		}
	}
	return false
}

// StreamTokensPerSecond is how fast streams delivered their tokens after
// the first, from the time per output token: the median stream's rate is
// 1 / TPOT p50, and the rate the slowest tenth of streams stayed under is
// 1 / TPOT p90 (the inverse of a time's p90 is the rate's p10). Both are 0
// without TPOT values.
func (op *Op) StreamTokensPerSecond() (p50, p10 float64) {
	q := op.Measures[stats.TPOT]
	// equivalent mutants: P50 < 0 and P90 < 0; a histogram that holds a
	// value (Count > 0) reads at least 1 µs at every quantile.
	if q.Count == 0 || q.P50 <= 0 || q.P90 <= 0 {
		return 0, 0
	}
	return 1 / q.P50.Seconds(), 1 / q.P90.Seconds()
}

// Summary is one workload's figures.
type Summary struct {
	Workload      Workload
	Window        Window
	Intervals     int // intervals inside the window
	Seconds       float64
	Ops           []Op
	Requests      int64 // in the window, all operations
	Rate          float64
	Dropped       int64 // in the window
	DroppedTotal  int64 // over the whole run
	RequestsTotal int64 // over the whole run
	ErrorsTotal   int64 // over the whole run
	// OpTotals are each operation's requests and failures over the whole
	// run, in the order they were first recorded.
	OpTotals []OpTotal
	Lag      Quantiles
	// Latency and TTFB are every operation's together, from the merged
	// histograms, of successful requests only, as Op's; AllLatency is of
	// every request, failed ones too, and LatencyOfAll as Op's.
	Latency, TTFB Quantiles
	AllLatency    Quantiles
	LatencyOfAll  bool
	Measures      [stats.NumMeasures]Quantiles // the same for the driver's measures
	ClientBound   bool                         // the generator was the limit (see clientbound.go)
	ClientWhy     string                       // the signals that made it so, "; "-separated; "" when not client-bound
	StarvedWhy    string                       // the phase was machine-busy: who used what (Resources.BusyWhy); "" when not
	LinkBound     bool                         // moved at least its link's bound (JudgeLink)
	Warnings      []string
	// LatencyByInterval and ServiceByInterval are the latency (from the
	// intended start) and the service time (from the actual start) of
	// every successful operation, one packed histogram per interval of the
	// window: what a knee's median and a verified size's latency are judged
	// on, with an interval.
	LatencyByInterval, ServiceByInterval []*stats.Hist `json:"-"`
}

// Summarize computes w's figures over its window. Intervals that lie wholly
// inside the window count; if none does, every interval counts and a warning
// says so.
func Summarize(w Workload, ivs []*stats.Interval) *Summary {
	s := &Summary{Workload: w, Window: w.Window}
	in := inWindow(ivs, w.Window)
	if len(in) == 0 && len(ivs) > 0 {
		in = ivs
		s.Window = Window{Start: ivs[0].Start, End: ivs[len(ivs)-1].End, Rule: "whole run (no whole interval inside the window)"}
		s.Warnings = append(s.Warnings, "the run is too short for a steady-state window; figures cover the whole run, warm-up included")
	}
	if len(in) > 0 {
		s.Window.Start, s.Window.End = in[0].Start, in[len(in)-1].End
	}
	s.Intervals = len(in)
	s.Seconds = s.Window.End.Sub(s.Window.Start).Seconds()
	if sch := w.Schedule; sch != nil && w.Model == "open" && !w.Start.IsZero() {
		s.Workload.TargetRate = sch.Mean(s.Window.Start.Sub(w.Start), s.Window.End.Sub(w.Start))
	}
	ops := map[string]*stats.OpStats{}
	var names []string
	lag := stats.NewHist()
	serviced := false
	for _, iv := range in {
		latency, service := stats.EmptyHist(), stats.EmptyHist()
		for _, name := range iv.OpNames() {
			if ops[name] == nil {
				ops[name] = stats.NewOpStats()
				names = append(names, name)
			}
			ops[name].Merge(iv.Ops[name])
			latency.Merge(iv.Ops[name].Latency)
			service.Merge(iv.Ops[name].Service)
		}
		latency.Pack()
		service.Pack()
		s.LatencyByInterval = append(s.LatencyByInterval, latency)
		s.ServiceByInterval = append(s.ServiceByInterval, service)
		serviced = serviced || service.Count() > 0
		s.Dropped += iv.Dropped
		lag.Merge(iv.Lag)
	}
	if !serviced { // a driver that measures no service time
		s.ServiceByInterval = nil
	}
	s.addTotals(ivs)
	all := stats.NewOpStats()
	for _, name := range names {
		op := summarizeOp(name, ops[name], s.Seconds)
		s.Ops = append(s.Ops, op)
		s.Requests += op.Requests
		all.Merge(ops[name])
		ops[name].Pack() // kept (Op.Whole) for the report, which only reads it
	}
	s.setLatencies(all)
	if s.Seconds > 0 {
		s.Rate = float64(s.Requests) / s.Seconds
	}
	s.Lag = QuantilesOf(lag)
	s.judge()
	return s
}

// OpTotal is one operation's requests and failures over the whole run.
type OpTotal struct {
	Name             string
	Requests, Errors int64
}

// addTotals counts the dropped arrivals, requests and failures of the
// whole run, all operations together and each on its own.
func (s *Summary) addTotals(ivs []*stats.Interval) {
	at := map[string]int{}
	for _, iv := range ivs {
		s.DroppedTotal += iv.Dropped
		for _, name := range iv.OpNames() {
			st := iv.Ops[name]
			i, ok := at[name]
			if !ok {
				i = len(s.OpTotals)
				at[name] = i
				s.OpTotals = append(s.OpTotals, OpTotal{Name: name})
			}
			s.OpTotals[i].Requests += st.Classes.Total()
			s.OpTotals[i].Errors += st.Classes.Errors()
			s.RequestsTotal += st.Classes.Total()
			s.ErrorsTotal += st.Classes.Errors()
		}
	}
}

// setLatencies sets the latencies of every operation together from all,
// their figures merged.
func (s *Summary) setLatencies(all *stats.OpStats) {
	s.Latency, s.TTFB = QuantilesOf(all.Latency), QuantilesOf(all.TTFB)
	s.AllLatency, s.LatencyOfAll = QuantilesOf(all.AllLatency()), all.Mixed
	for m, h := range all.Measures {
		if h != nil {
			s.Measures[m] = QuantilesOf(h)
		}
	}
}

// HasFailedLatency reports whether the workload has failed operations'
// latency apart from its successful ones'.
func (s *Summary) HasFailedLatency() bool { return s.AllLatency.Count > s.Latency.Count }

func inWindow(ivs []*stats.Interval, w Window) []*stats.Interval {
	var out []*stats.Interval
	for _, iv := range ivs {
		if !iv.Start.Before(w.Start) && !iv.End.After(w.End) {
			out = append(out, iv)
		}
	}
	return out
}

func summarizeOp(name string, st *stats.OpStats, seconds float64) Op {
	op := Op{
		Name: name, Requests: st.Classes.Total(), OK: st.Classes[stats.OK],
		Latency: QuantilesOf(st.Latency), Service: QuantilesOf(st.Service),
		TTFB: QuantilesOf(st.TTFB), Connect: QuantilesOf(st.Connect), Whole: st,
		AllLatency: QuantilesOf(st.AllLatency()), LatencyOfAll: st.Mixed,
	}
	if st.HasFailed() {
		op.FailedLatency = QuantilesOf(st.Failed)
	}
	if op.Requests > 0 {
		op.SuccessRate = float64(op.OK) / float64(op.Requests)
	}
	for m, h := range st.Measures {
		if h != nil {
			op.Measures[m] = QuantilesOf(h)
		}
	}
	op.Counters = st.Counters
	if seconds > 0 {
		op.Rate = float64(op.Requests) / seconds
		op.BytesSentPS = float64(st.BytesSent) / seconds
		op.BytesRecvPS = float64(st.BytesRecv) / seconds
		for c, n := range st.Counters {
			op.CountersPS[c] = float64(n) / seconds
		}
	}
	for c := stats.OK + 1; c < stats.NumClasses; c++ {
		if n := st.Classes[c]; n > 0 {
			op.Errors = append(op.Errors, ErrorCount{Class: c.String(), Count: n, Sample: st.Samples[c]})
		}
	}
	return op
}

// judge adds the warnings a reader needs before trusting the figures.
func (s *Summary) judge() {
	s.markClientBound(unissuedWhy(s.Workload))
	// equivalent mutants: Count >= 0, an empty lag's P99 is 0; P99 >=
	// lagLimit, the histogram reads 4.999 or 5.003 ms, never 5 ms itself.
	if s.Workload.Model == "open" && s.Lag.Count > 0 && s.Lag.P99 > lagLimit {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"arrivals went out late: scheduler lag p99 %v (> %v); latency, measured from each intended start, includes the delay; lag alone does not make a run client-bound, since a busy machine delays the dispatcher too",
			s.Lag.P99.Round(time.Microsecond), lagLimit))
	}
	s.judgeDispatchDelay()
	if s.Dropped > 0 {
		s.Warnings = append(s.Warnings, s.poolLimitText())
	}
	// equivalent mutant: TargetRate >= 0; no rate is below a target of 0.
	if s.Workload.TargetRate > 0 && s.Rate < 0.95*s.Workload.TargetRate {
		s.Warnings = append(s.Warnings, fmt.Sprintf("achieved %.1f ops/s, below the target %.1f ops/s", s.Rate, s.Workload.TargetRate))
	}
	if s.Requests > 0 && s.Requests < 100 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("only %d requests in the window: p99 and above rest on fewer than 100 samples", s.Requests))
	}
	if c := s.Connections(); c.Stray > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the server wrote what no request asked for %d times (bytes behind a complete answer, or on an idle connection: "+
			"a pipelined, repeated or late answer): perflab closed those connections and took none of it as an answer", c.Stray))
	}
}

// Connections is what an HTTP workload's client counted of its answers
// and connections over the window (stats.Counter.Connection).
type Connections struct {
	BodyBytes, Retries, IdleCloses, Stray int64
	BodyBytesPS                           float64
}

// Connections sums the connection counters of s's operations; the zero
// Connections when its driver counts none.
func (s *Summary) Connections() Connections {
	var c Connections
	for _, op := range s.Ops {
		c.BodyBytes += op.Counters[stats.BodyBytes]
		c.BodyBytesPS += op.CountersPS[stats.BodyBytes]
		c.Retries += op.Counters[stats.Retries]
		c.IdleCloses += op.Counters[stats.IdleCloses]
		c.Stray += op.Counters[stats.StrayAnswers]
	}
	return c
}

// DispatchShare is the share of the latency p50 at or above which the
// scheduler lag p50 is pointed out: the latency then shows the generator's
// dispatch as much as the target.
const DispatchShare = 0.25

// judgeDispatchDelay warns when a fast target's latency, counted from
// each intended start, is largely the dispatcher's delay: arrivals due
// within a dispatch quantum go out together, up to a quantum late, which
// at 20,000/s against nginx made a p50 of 770 µs out of 130 µs of service.
func (s *Summary) judgeDispatchDelay() {
	// equivalent mutant: Lag.P50 < 0; with Lag.Count > 0 the lag p50 is at
	// least 1 µs (the histogram's lowest value).
	if s.Workload.Model != "open" || s.Lag.Count == 0 || s.Latency.Count == 0 || s.Lag.P50 <= 0 ||
		float64(s.Lag.P50) < DispatchShare*float64(s.Latency.P50) {
		return
	}
	text := fmt.Sprintf("scheduler lag p50 %v is %.0f %% of the latency p50 %v: the latency, counted from each intended start, shows the generator's dispatch as much as the target",
		s.Lag.P50.Round(time.Microsecond), 100*float64(s.Lag.P50)/float64(s.Latency.P50), s.Latency.P50.Round(time.Microsecond))
	if len(s.Ops) == 1 && s.Ops[0].Service.Count > 0 {
		text += fmt.Sprintf("; the service time from the actual start, p50 %v, is the target's alone", s.Ops[0].Service.P50.Round(time.Microsecond))
	}
	s.Warnings = append(s.Warnings, text+" (arrivals due within a dispatch quantum go out together: a finer one, perflab http --dispatch-quantum 250us or a plan workload's dispatch_quantum, without a backlog, sends them closer to their instants, at more CPU)")
}

// poolLimitText is the warning of arrivals dropped at vus.max: the
// target's slowness, unless the generator was found at its limit, when the
// drops say nothing of the target, or unless the operations' mean keeps
// only a tenth of the pool busy, when a stall filled it: the target's, or
// the generator's own (a CPU-throttled worker's arrivals wait out the
// throttled part of each period and go out together).
func (s *Summary) poolLimitText() string {
	busy, why := s.busyVUs()
	cause := "while the target was slow (not client-bound)" + why + "; raise vus.max or expect the target to be overloaded"
	switch {
	case s.ClientBound:
		cause = "while the generator was at its limit (client-bound): the target need not have been slow"
	case s.StarvedWhy != "":
		cause = "while the machine was busy: the generator was starved: " + strings.Replace(s.StarvedWhy, "others than perflab and its components ", "others ", 1) +
			" (" + s.lagFigure() + "its own CPU is in the resources table); the target need not have been slow"
	case busy > 0 && busy*stallShare <= float64(s.Workload.VUsMax):
		cause = "though" + strings.TrimPrefix(why, ":") + ": a stall filled the pool, the target's or the generator's own (" +
			s.lagFigure() + "a service time far below the latency says the generator's)"
	}
	return fmt.Sprintf("%s%d arrivals dropped in the window: every VU was busy at vus.max %d %s",
		poolLimitPrefix, s.Dropped, s.Workload.VUsMax, cause)
}

// stallShare: when the operations' mean keeps at most 1/stallShare of
// vus.max busy, arrivals dropped at vus.max came from a stall, not from
// the target's mean service time.
const stallShare = 10

// lagFigure is "scheduler lag p99 X; ", or "" without a lag.
func (s *Summary) lagFigure() string {
	if s.Lag.Count == 0 {
		return ""
	}
	return fmt.Sprintf("scheduler lag p99 %v; ", s.Lag.P99.Round(time.Microsecond))
}

// busyVUs is how many VUs the target rate keeps busy at the operations'
// mean service time (Little's law), to set beside vus.max, and the text
// that says so; 0 and "" without the figures.
func (s *Summary) busyVUs() (float64, string) {
	var n int64
	var sum float64
	for _, op := range s.Ops {
		n += op.Service.Count
		sum += float64(op.Service.Count) * op.Service.Mean.Seconds()
	}
	if n == 0 || s.Workload.TargetRate <= 0 {
		return 0, ""
	}
	mean := time.Duration(sum / float64(n) * float64(time.Second))
	busy := max(1, math.Round(s.Workload.TargetRate*mean.Seconds()))
	return busy, fmt.Sprintf(": at %s/s, operations of %v on average keep about %.0f VUs busy",
		units.Sig3(s.Workload.TargetRate), mean.Round(10*time.Microsecond), busy)
}

// poolLimitPrefix begins the warning of arrivals dropped at vus.max.
const poolLimitPrefix = "pool limit: "

// DisplayName is the workload's name as reports show it under its profile.
func (w Workload) DisplayName() string {
	if w.Short != "" {
		return w.Short
	}
	return w.Name
}

// AllFailed reports whether every operation of the run failed, or every
// operation of its steady-state window: what succeeded before the window
// (a warm-up against a target that then went away) makes no figure.
func (s *Summary) AllFailed() bool {
	return s.RequestsTotal > 0 && s.ErrorsTotal == s.RequestsTotal || s.WindowFailed()
}

// WindowFailed reports whether operations ran in the steady-state window
// and every one of them failed.
func (s *Summary) WindowFailed() bool {
	var ok int64
	for _, op := range s.Ops {
		ok += op.OK
	}
	return s.Requests > 0 && ok == 0
}
