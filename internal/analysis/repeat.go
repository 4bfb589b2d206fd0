package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/perflab/perflab/internal/stats"
)

// Spread is one figure of each of several repeated runs (the repetitions
// of perflab run --repeat): the figures in run order, their mean, lowest
// and highest, and Student's t 95 % interval for the mean.
type Spread struct {
	Values         []float64 // one per run that has the figure, in run order
	Mean, Min, Max float64   // NaN without values
	Low, High      float64   // the 95 % interval of the mean; NaN with fewer than MinRuns values
}

// N is the number of runs the spread is over.
func (s Spread) N() int { return len(s.Values) }

// SpreadOf is the spread of vs, one figure per run; vs is not modified.
// The interval is mean ± t(0.975, n − 1) × s / √n: it says where the mean
// of many more runs would lie if the run-to-run variation is normal, and
// with two or three runs it is wide, as it should be. For figures that
// cannot be negative (every value ≥ 0) its low end is at least 0.
func SpreadOf(vs []float64) Spread {
	s := Spread{Values: slices.Clone(vs), Mean: math.NaN(), Min: math.NaN(), Max: math.NaN(), Low: math.NaN(), High: math.NaN()}
	if len(vs) == 0 {
		return s
	}
	s.Mean, s.Min, s.Max = mean(vs), slices.Min(vs), slices.Max(vs)
	if len(vs) < MinRuns {
		return s
	}
	half := tQuantile(1-(1-CompareConfidence)/2, float64(len(vs)-1)) * math.Sqrt(variance(vs, s.Mean)/float64(len(vs)))
	s.Low, s.High = s.Mean-half, s.Mean+half
	if s.Min >= 0 {
		s.Low = max(s.Low, 0) // a figure that cannot be negative has no negative mean
	}
	return s
}

// Repetition is one run of a profile in a repeated run: what its resource
// figures are taken from (its window, components and series) and its
// workloads' summaries.
type Repetition struct {
	State     string // "" or "completed" when it ran to its end
	Input     ResourceInput
	Summaries []*Summary
}

// PoolRepetitions makes one phase of a profile's repetitions, for sizing
// and the other insights (CellInsights): the resource figures over every
// sample inside any repetition's window, pooled (so a P99 is the P99 of
// all the repetitions' samples together, not a mean of P99s); each
// component's sizing samples pooled the same way; and each workload's
// summary over the repetitions' windows together (PoolSummaries). Its
// state is that of the first repetition that did not complete, if any.
func PoolRepetitions(profile string, reps []Repetition) PhaseData {
	pd := PhaseData{Profile: profile, State: pooledState(reps)}
	if len(reps) == 0 {
		return pd
	}
	pooled := ResourceInput{Series: map[string]map[string][]Point{}, CoresAvailable: reps[0].Input.CoresAvailable,
		Window: Window{Start: reps[0].Input.Window.Start, End: reps[len(reps)-1].Input.Window.End,
			Rule: fmt.Sprintf("the steady-state windows of %d repetitions, pooled", len(reps))}}
	seen := map[string]int{}
	var sizing [][]SizingInput
	var sums [][]*Summary
	for _, r := range reps {
		in := r.Input
		for _, c := range in.Components {
			if i, ok := seen[c.Name]; !ok {
				seen[c.Name] = len(pooled.Components)
				pooled.Components = append(pooled.Components, c)
			} else if pooled.Components[i].Exited.IsZero() {
				pooled.Components[i].Exited, pooled.Components[i].ExitText = c.Exited, c.ExitText
			}
		}
		for comp, metrics := range in.Series {
			if pooled.Series[comp] == nil {
				pooled.Series[comp] = map[string][]Point{}
			}
			for m, ps := range metrics {
				pooled.Series[comp][m] = append(pooled.Series[comp][m], pointsIn(ps, in.Window)...)
			}
		}
		sizing = append(sizing, SizingInputs(in, 0))
		sums = append(sums, r.Summaries)
	}
	pd.Resources = SummarizeResources(pooled)
	pd.Sizing = PoolSizingInputs(sizing)
	pd.Summaries = PoolSummaries(sums)
	return pd
}

// pooledState is the state of a pooled phase: the first repetition's that
// did not complete, else completed.
func pooledState(reps []Repetition) string {
	for _, r := range reps {
		if r.State != "" && r.State != "completed" {
			return r.State
		}
	}
	return "completed"
}

// PoolSizingInputs pools each component's sizing inputs over several
// repetitions (one slice per repetition): the CPU and memory samples of
// every repetition in order, the windows' lengths added up, the largest
// warm-up, the restarts added up, and an exit in any window. Components
// keep the order in which they first appear.
func PoolSizingInputs(reps [][]SizingInput) []SizingInput {
	var out []SizingInput
	at := map[string]int{}
	for _, rep := range reps {
		for _, si := range rep {
			i, ok := at[si.Component]
			if !ok {
				at[si.Component] = len(out)
				out = append(out, SizingInput{Component: si.Component})
				i = len(out) - 1
			}
			p := &out[i]
			p.CPU = append(p.CPU, si.CPU...)
			p.Memory = append(p.Memory, si.Memory...)
			p.Window += si.Window
			p.WarmUp = max(p.WarmUp, si.WarmUp)
			p.Restarts += si.Restarts
			p.Exited = p.Exited || si.Exited
		}
	}
	return out
}

// PoolSummaries pools the summaries of each workload over several
// repetitions (one slice per repetition, workloads matched by display
// name): per operation, and for every operation together, the merged
// histograms (latency, TTFB and the driver's measures) and counts of every
// repetition's window, and rates over the windows' lengths added up. The
// scheduler lag, whose histogram a summary does not keep, is the worst
// repetition's (by p99); a pooled workload is client-bound when any
// repetition was. A pooled summary has no warnings of its own: each
// repetition's are in its summary.
func PoolSummaries(reps [][]*Summary) []*Summary {
	var out []*Summary
	at := map[string]int{}
	ops := map[string]map[string]*stats.OpStats{}
	names := map[string][]string{}
	for _, rep := range reps {
		for _, s := range rep {
			key := s.Workload.DisplayName()
			i, ok := at[key]
			if !ok {
				at[key] = len(out)
				out = append(out, &Summary{Workload: s.Workload, Window: s.Window, Lag: s.Lag})
				ops[key] = map[string]*stats.OpStats{}
				i = len(out) - 1
			}
			p := out[i]
			p.Window.End = s.Window.End
			p.Intervals += s.Intervals
			p.Seconds += s.Seconds
			p.Dropped += s.Dropped
			p.DroppedTotal += s.DroppedTotal
			p.RequestsTotal += s.RequestsTotal
			p.ErrorsTotal += s.ErrorsTotal
			p.ClientBound, p.ClientWhy = p.ClientBound || s.ClientBound, addWhy(p.ClientWhy, s.ClientWhy)
			p.LinkBound = p.LinkBound || s.LinkBound
			if s.Lag.P99 > p.Lag.P99 {
				p.Lag = s.Lag
			}
			for _, op := range s.Ops {
				if ops[key][op.Name] == nil {
					ops[key][op.Name] = stats.NewOpStats()
					names[key] = append(names[key], op.Name)
				}
				if op.Whole != nil {
					ops[key][op.Name].Merge(op.Whole)
				}
			}
		}
	}
	for _, p := range out {
		key := p.Workload.DisplayName()
		p.Window.Rule = fmt.Sprintf("the windows of %d repetitions, pooled", len(reps))
		all := stats.NewOpStats()
		for _, name := range names[key] {
			op := summarizeOp(name, ops[key][name], p.Seconds)
			p.Ops = append(p.Ops, op)
			p.Requests += op.Requests
			all.Merge(ops[key][name])
		}
		p.setLatencies(all)
		if p.Seconds > 0 {
			p.Rate = float64(p.Requests) / p.Seconds
		}
	}
	return out
}
