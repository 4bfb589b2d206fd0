package analysis

import (
	"math/rand/v2"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// pairedQuantileDiffs is, for each of qs, the 95 % percentile interval of
// the resampled differences quantile(B) − quantile(A), where each resample
// draws len(ba) batch indices with replacement and uses the same indices
// on both sides. ba and bb hold the two sides' batches of the same
// intervals, in the same order.
func pairedQuantileDiffs(ba, bb []*stats.Hist, qs []float64, o BootstrapOptions) (lows, highs []time.Duration) {
	if len(qs) == 0 {
		return nil, nil
	}
	values, sa, sb := sparse(ba, bb)
	dense := make([]int64, len(values))
	rng := o.rand()
	idx := make([]int, len(ba))
	diffs := make([][]float64, len(qs))
	qa, qb := make([]time.Duration, len(qs)), make([]time.Duration, len(qs))
	for range o.Resamples {
		drawIndices(idx, rng)
		pickedQuantiles(sa, idx, dense, values, qs, qa)
		pickedQuantiles(sb, idx, dense, values, qs, qb)
		for i := range qs {
			diffs[i] = append(diffs[i], float64(qb[i]-qa[i]))
		}
	}
	for i := range qs {
		lo, hi := percentileInterval(diffs[i])
		lows, highs = append(lows, time.Duration(lo)), append(highs, time.Duration(hi))
	}
	return lows, highs
}

// drawIndices fills idx with indices below len(idx), drawn with
// replacement.
func drawIndices(idx []int, rng *rand.Rand) {
	for i := range idx {
		idx[i] = rng.IntN(len(idx))
	}
}

// pickedQuantiles adds the histograms hs[idx[0]], hs[idx[1]], … into dense
// and reads each quantile of qs (ascending) into out, the way the HDR
// histogram does (see resampleQuantile). An empty resample reads 0.
func pickedQuantiles(hs []sparseHist, idx []int, dense []int64, values []time.Duration, qs []float64, out []time.Duration) {
	clear(dense)
	var total int64
	for _, k := range idx {
		h := hs[k]
		for j, i := range h.idx {
			dense[i] += h.counts[j]
			total += h.counts[j]
		}
	}
	clear(out)
	if total == 0 {
		return
	}
	var cum int64
	next := 0
	for i, c := range dense {
		cum += c
		for next < len(qs) && cum >= max(1, int64(qs[next]*float64(total)+0.5)) {
			out[next] = values[i]
			next++
		}
		if next == len(qs) {
			return
		}
	}
	for ; next < len(qs); next++ {
		out[next] = values[len(values)-1]
	}
}
