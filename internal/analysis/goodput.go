package analysis

import "github.com/perflab/perflab/internal/stats"

// Goodput is how many requests met every goodput bound (the openai
// driver's goodput params) over the window: Good of the Judged requests
// (every request, failed ones too), Share = Good / Judged, and Rate, good
// requests per second of the window.
type Goodput struct {
	Good, Judged int64
	Share, Rate  float64
}

// goodputOf is the goodput of counters summed over seconds; ok is false
// when no request was judged (the workload has no goodput bounds, or no
// request in the window).
func goodputOf(counters [stats.NumCounters]int64, seconds float64) (Goodput, bool) {
	g := Goodput{Good: counters[stats.Goodput], Judged: counters[stats.GoodputJudged]}
	if g.Judged == 0 {
		return g, false
	}
	g.Share = float64(g.Good) / float64(g.Judged)
	if seconds > 0 {
		g.Rate = float64(g.Good) / seconds
	}
	return g, true
}

// Goodput is op's goodput over the window; ok is false when its requests
// were not judged.
func (op *Op) Goodput() (Goodput, bool) {
	g, ok := goodputOf(op.Counters, 0)
	g.Rate = op.CountersPS[stats.Goodput]
	return g, ok
}

// Goodput is the workload's goodput, every operation together; ok is false
// when no request was judged.
func (s *Summary) Goodput() (Goodput, bool) {
	var sum [stats.NumCounters]int64
	for _, op := range s.Ops {
		for c, n := range op.Counters {
			sum[c] += n
		}
	}
	return goodputOf(sum, s.Seconds)
}

// Lengths are the quantiles of a length measure (stats.PromptLength,
// stats.OutputLength) in tokens.
type Lengths struct {
	Count                    int64
	P50, P90, P99, Max, Mean int64
}

// LengthsOf reads the tokens of a length measure's quantiles.
func LengthsOf(q Quantiles) Lengths {
	return Lengths{Count: q.Count, P50: stats.Tokens(q.P50), P90: stats.Tokens(q.P90), P99: stats.Tokens(q.P99),
		Max: stats.Tokens(q.Max), Mean: stats.Tokens(q.Mean)}
}
