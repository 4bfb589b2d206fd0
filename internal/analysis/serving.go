package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/scrape"
	"github.com/perflab/perflab/internal/units"
)

// Serving are an LLM serving engine's own figures over the window, read
// from its /metrics by a metrics_preset (observe.ServingEngines): what
// the server says of its queue, KV cache, prefix cache and times, to set
// beside what the client measured.
type Serving struct {
	Engine           string // the preset whose names were found
	Running, Waiting Stat   // requests in the batch and queued, as sampled
	KVUsage          Stat   // fraction of the KV cache in use, 0..1
	// HitRate is the prefix cache's hits over its queries (prompt
	// tokens) grown in the window, or the server's own ratio's mean where
	// it exports only that; HasHitRate is false when it has neither or
	// no query was made.
	HitRate    float64
	HasHitRate bool
	Queries    float64 // prompt tokens looked up in the window; 0 with a ratio
	// TTFT and E2E are the server's time to first token and whole
	// request time, from arrival, over the requests its histograms
	// counted in the window.
	TTFT, E2E ServerTimes
}

// ServerTimes are quantiles of a server's histogram over the requests it
// counted in a window, interpolated within buckets as Prometheus's
// histogram_quantile does: their precision is the buckets', which each
// quantile carries.
type ServerTimes struct {
	Count    float64 // requests counted; 0: no figures
	P50, P99 BucketQuantile
	HasP99   bool // Count >= MinSamplesP99
}

// BucketQuantile is a quantile estimated from a histogram: the estimate
// and the bucket it lies in, (Lo, Hi]; Hi is 0 for the +Inf bucket,
// where the estimate is Lo.
type BucketQuantile struct {
	Est, Lo, Hi time.Duration
}

// servingOf reads the serving figures from a component's series in the
// window; nil when it has none of any preset's.
func servingOf(series map[string][]Point) *Serving {
	for _, name := range observe.ServingEngineNames() {
		e := observe.ServingEngines[name]
		gauge := func(metric string) Stat { return StatOf(values(series[observe.MetricPrefix+metric])) }
		s := &Serving{Engine: name, Running: gauge(e.Running), Waiting: gauge(e.Waiting), KVUsage: gauge(e.KVUsage)}
		s.hitRate(e, series)
		s.TTFT, s.E2E = serverTimes(series, e.TTFT), serverTimes(series, e.E2E)
		if s.Running.N > 0 || s.Waiting.N > 0 || s.HasHitRate || s.TTFT.Count > 0 {
			return s
		}
	}
	return nil
}

// hitRate fills in the prefix cache's hit rate over the window.
func (s *Serving) hitRate(e observe.ServingEngine, series map[string][]Point) {
	if e.PrefixQueries != "" {
		q := growth(series[observe.CounterPrefix+e.PrefixQueries])
		h := growth(series[observe.CounterPrefix+e.PrefixHits])
		if q > 0 {
			s.HitRate, s.HasHitRate, s.Queries = h/q, true, q
		}
		return
	}
	if e.HitRate != "" {
		if st := StatOf(values(series[observe.MetricPrefix+e.HitRate])); st.N > 0 {
			s.HitRate, s.HasHitRate = st.Avg, true
		}
	}
}

// growth is how much a cumulative series grew between its first and
// last samples in the window; 0 when it went down (a restart).
func growth(ps []Point) float64 {
	if len(ps) < 2 || ps[len(ps)-1].V < ps[0].V {
		return 0
	}
	return ps[len(ps)-1].V - ps[0].V
}

// serverTimes are the quantiles of the histogram whose buckets the
// scrape stored under name, over their growth in the window.
func serverTimes(series map[string][]Point, name string) ServerTimes {
	if name == "" {
		return ServerTimes{}
	}
	type bucket struct{ le, n float64 }
	var buckets []bucket
	for m, ps := range series {
		if n, le, ok := scrape.ParseBucketMetric(m); ok && n == name {
			buckets = append(buckets, bucket{le, growth(ps)})
		}
	}
	slices.SortFunc(buckets, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	if len(buckets) == 0 || buckets[len(buckets)-1].n <= 0 {
		return ServerTimes{}
	}
	les, counts := make([]float64, len(buckets)), make([]float64, len(buckets))
	for i, b := range buckets {
		les[i], counts[i] = b.le, b.n
	}
	total := counts[len(counts)-1]
	return ServerTimes{Count: total, P50: bucketQuantile(0.5, les, counts),
		P99: bucketQuantile(0.99, les, counts), HasP99: total >= float64(MinCountFor(0.99))}
}

// bucketQuantile is histogram_quantile's estimate of quantile q from
// cumulative counts by ascending upper bound, the last +Inf: linear
// within the bucket the rank falls in, from 0 for the first; the highest
// finite bound when it falls in +Inf.
func bucketQuantile(q float64, les, counts []float64) BucketQuantile {
	total := counts[len(counts)-1]
	rank := q * total
	i, _ := slices.BinarySearch(counts, rank)
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = les[i-1], counts[i-1]
	}
	switch {
	case math.IsInf(les[i], 1):
		return BucketQuantile{Est: seconds(lo), Lo: seconds(lo)}
	case counts[i] == below:
		return BucketQuantile{Est: seconds(les[i]), Lo: seconds(lo), Hi: seconds(les[i])}
	}
	est := lo + (les[i]-lo)*(rank-below)/(counts[i]-below)
	return BucketQuantile{Est: seconds(est), Lo: seconds(lo), Hi: seconds(les[i])}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// isBucket says whether a stored metric is a histogram's bucket, which
// is read whole by servingOf rather than as a series of its own.
func isBucket(m string) bool { return strings.HasPrefix(m, observe.BucketPrefix) }

// servingMoved says which of a serving engine's own figures moved from
// the phase before (b) to this one (c), for the why of a latency rise:
// its queue grew, its KV cache filled, its prefix hits fell, its own time
// to first token rose; or that none did, so the rise came from outside
// it. "" when no component has serving figures in both.
func servingMoved(b, c *Resources) string {
	if b == nil || c == nil {
		return ""
	}
	var out []string
	for _, cc := range c.Components {
		bs, cs := servingOfComponent(b, cc.Name), cc.Serving
		if bs == nil || cs == nil {
			continue
		}
		var moved, still []string // what moved; what was measured in both and did not
		if w0, w1 := p99OrMax(bs.Waiting), p99OrMax(cs.Waiting); cs.Waiting.N > 0 && bs.Waiting.N > 0 {
			if w1 >= 1 && w1 > 2*w0 {
				moved = append(moved, fmt.Sprintf("its queue grew (waiting %s → %s)", units.Sig3(w0), units.Sig3(w1)))
			} else {
				still = append(still, "queue")
			}
		}
		if k0, k1 := p99OrMax(bs.KVUsage), p99OrMax(cs.KVUsage); cs.KVUsage.N > 0 && bs.KVUsage.N > 0 {
			if k1 >= KVFull && k1 > k0 {
				moved = append(moved, fmt.Sprintf("its KV cache filled (%s %% → %s %% in use)", units.Sig3(100*k0), units.Sig3(100*k1)))
			} else {
				still = append(still, "KV cache")
			}
		}
		if bs.HasHitRate && cs.HasHitRate {
			if cs.HitRate < bs.HitRate-0.1 {
				moved = append(moved, fmt.Sprintf("its prefix-cache hit rate fell (%s %% → %s %%)", units.Sig3(100*bs.HitRate), units.Sig3(100*cs.HitRate)))
			} else {
				still = append(still, "prefix hits")
			}
		}
		if t0, t1 := bs.TTFT.P50.Est, cs.TTFT.P50.Est; bs.TTFT.Count > 0 && cs.TTFT.Count > 0 {
			if t1 > KneeFactor*t0 {
				moved = append(moved, fmt.Sprintf("its own TTFT p50 rose (%v → %v)", roundSig3(t0), roundSig3(t1)))
			} else {
				still = append(still, "TTFT")
			}
		}
		switch {
		case len(moved) == 0 && len(still) == 0:
			continue // nothing of its own measured in both: nothing to say
		case len(moved) == 0:
			out = append(out, "server "+cc.Name+"'s own "+joinNames(still)+" did not move: the rise came from outside it")
			continue
		}
		out = append(out, "server "+cc.Name+": "+strings.Join(moved, ", "))
	}
	return strings.Join(out, "; ")
}

// KVFull is the share of a KV cache in use at which reports call it full.
const KVFull = 0.9

func servingOfComponent(r *Resources, name string) *Serving {
	for _, c := range r.Components {
		if c.Name == name {
			return c.Serving
		}
	}
	return nil
}

// p99OrMax is a gauge's p99 over the window, or its max when too few
// samples give a p99.
func p99OrMax(s Stat) float64 {
	if s.HasP99() {
		return s.P99
	}
	return s.Max
}
