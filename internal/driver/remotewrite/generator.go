package remotewrite

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// generator hands out samples of the active series in a fixed order, from
// one cursor shared by all VUs: position p is sample number p since the
// start, of round p / active (one scrape of every series) and series
// p % active, target-major. So over one round every active series gets
// exactly one sample, and at the natural rate a round lasts one scrape
// interval.
//
// Targets are slots 0 … targets-1. Churn replaces slots in turn, round
// robin: by churn epoch k (k × every after the first sample), the first
// floor(k × targets × share) replacements have been made. A replaced slot
// gets a new instance id, id = slot + generation × targets, so every
// instance label value ever used is distinct.
//
// A generator of one shard of a distributed run (shard) writes only the
// slots first, first+stride, …: its local slot l is slot first + l·stride
// of the whole load, with the instance ids that slot has there, so the
// shards' series are disjoint and together the whole load's.
type generator struct {
	tmpl     []tseries
	spt      uint64 // series per target
	targets  uint64 // of the whole load
	local    uint64 // the slots this generator writes: targets, or a shard's part
	first    uint64 // the whole load's slot of local slot 0
	stride   uint64 // … and the step between local slots
	active   uint64 // local × spt
	share    float64
	every    time.Duration
	job      string
	maxLabel int // the most labels of any template series
	sym      symbols
	exShare  float64  // share of counter and native histogram samples with an exemplar
	traceIDs []string // … their trace IDs
	traceSym uint32   // the trace_id label name's symbol

	start  atomic.Int64 // UnixNano of the first sample; 0 before
	cursor atomic.Uint64
	epoch  atomic.Pointer[epochState]
	mu     sync.Mutex // serialises building the next epochState
}

// epochState is the targets of one churn epoch. It is immutable once
// published.
type epochState struct {
	k    uint64
	ids  []uint64 // instance id per slot
	inst []string // instance label value per slot
}

func newGenerator(c Config) *generator {
	fams := families(layoutFor(c.SeriesPerTarget))
	tmpl := template(fams)
	if c.NativeHistograms != nil {
		tmpl = append(tmpl, nativeSeries(fams, c.NativeHistograms.shape(), len(tmpl))...)
	}
	g := &generator{
		tmpl:    tmpl,
		spt:     uint64(len(tmpl)),
		targets: uint64(c.Targets),
		local:   uint64(c.Targets),
		stride:  1,
		active:  uint64(len(tmpl)) * uint64(c.Targets),
		share:   c.Churn.Percent / 100,
		every:   c.Churn.Every,
		job:     c.Job,
	}
	for _, t := range tmpl {
		g.maxLabel = max(g.maxLabel, len(t.labels))
	}
	g.symbolize()
	for i := range g.tmpl {
		g.tmpl[i].bound = sizeBound(&g.tmpl[i]) + len(g.job)
	}
	if c.ExemplarPercent > 0 {
		g.exShare, g.traceIDs, g.traceSym = c.ExemplarPercent/100, traceIDList(), g.sym.id(traceIDLabel)
	}
	g.epoch.Store(g.buildEpoch(nil, 0))
	return g
}

// names are the metric names of a target's native histograms (native),
// or else of its float series, sorted, each once.
func (g *generator) names(native bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range g.tmpl {
		if (t.kind == nhist) != native {
			continue
		}
		if n := t.labels[0].Value; !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// replaced is how many replacements churn has made by epoch k.
func (g *generator) replaced(k uint64) uint64 {
	if g.share == 0 {
		return 0
	}
	return uint64(math.Floor(float64(k)*float64(g.targets)*g.share + 1e-9))
}

// generation is how often slot has been replaced by epoch k: replacement
// number m (from 0) replaces slot m mod targets.
func (g *generator) generation(slot, k uint64) uint64 {
	r := g.replaced(k)
	if r <= slot {
		return 0
	}
	return (r-1-slot)/g.targets + 1
}

// buildEpoch makes the state of epoch k, reusing prev's strings for slots
// that did not change.
func (g *generator) buildEpoch(prev *epochState, k uint64) *epochState {
	es := &epochState{k: k, ids: make([]uint64, g.local), inst: make([]string, g.local)}
	for l := range g.local {
		slot := g.first + l*g.stride
		id := slot + g.generation(slot, k)*g.targets
		es.ids[l] = id
		if prev != nil && prev.ids[l] == id {
			es.inst[l] = prev.inst[l]
		} else {
			es.inst[l] = instanceName(id)
		}
	}
	return es
}

// shard makes g the generator of shard index of of: the slots t with
// t mod of == index. Call it before the first fill.
func (g *generator) shard(index, of int) {
	g.first, g.stride = uint64(index), uint64(of)
	g.local = 0
	if g.first < g.targets {
		g.local = (g.targets-g.first-1)/g.stride + 1
	}
	g.active = g.local * g.spt
	g.epoch.Store(g.buildEpoch(nil, 0))
}

// instanceName is an address-like instance label value, distinct per id.
func instanceName(id uint64) string {
	if id < 1<<24 {
		return fmt.Sprintf("10.%d.%d.%d:9100", id>>16, id>>8&0xff, id&0xff)
	}
	return fmt.Sprintf("host-%d:9100", id)
}

// epochAt returns the targets at now, building them when churn moved on.
func (g *generator) epochAt(now time.Time) *epochState {
	cur := g.epoch.Load()
	if g.share == 0 {
		return cur
	}
	start := g.start.Load()
	if start == 0 {
		g.start.CompareAndSwap(0, now.UnixNano())
		start = g.start.Load()
	}
	elapsed := now.UnixNano() - start
	if elapsed < 0 {
		return cur
	}
	k := uint64(elapsed / int64(g.every))
	if k <= cur.k {
		return cur
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if cur = g.epoch.Load(); k > cur.k {
		cur = g.buildEpoch(cur, k)
		g.epoch.Store(cur)
	}
	return cur
}

// segment is a run of template series [lo, hi) of one instance in a
// request, what the ack log records.
type segment struct {
	id     uint64
	lo, hi uint32
}

// batch is what one request carries, for the ack log.
type batch struct {
	segs       []segment
	samples    int
	histograms int // native histograms
	exemplars  int
	hists      []histRef // … which ones
	ts         int64     // the samples' timestamp, ms
}

// histRef is one native histogram sample of a batch: series ti of the
// target whose instance has id, at round.
type histRef struct {
	id    uint64
	ti    uint32
	round uint64
}

// counts is what the batch carries.
func (b *batch) counts() counts {
	return counts{samples: int64(b.samples), histograms: int64(b.histograms), exemplars: int64(b.exemplars)}
}

// fill claims the next n samples from the cursor and writes them, stamped
// now, into st's request of the protocol st.v2 says, reusing its buffers;
// the batch says what they are. n is at most the number of active series,
// so a request never holds two samples of one series.
func (g *generator) fill(st *builder, n int, now time.Time) {
	es := g.epochAt(now)
	ms := now.UnixMilli()
	p0 := g.cursor.Add(uint64(n)) - uint64(n)
	round, q := p0/g.active, p0%g.active
	slot, ti := q/g.spt, q%g.spt
	if st.v2 {
		st.w2.begin(n, len(g.sym.list), 2*g.maxLabel)
	} else {
		st.reserve(n, g.maxLabel)
	}
	b := &st.batch
	b.segs, b.samples, b.histograms, b.exemplars, b.hists, b.ts = b.segs[:0], n, 0, 0, b.hists[:0], ms
	st.hs.reset()
	st.ex.reset()
	st.bound = 0
	st.labels = st.labels[:0]
	for j := range n {
		p := place{t: &g.tmpl[ti], j: j, slot: slot, id: es.ids[slot], round: round, inst: es.inst[slot], ms: ms}
		st.bound += p.t.bound + len(p.inst)
		if p.t.kind == nhist {
			b.samples--
			b.histograms++
			b.hists = append(b.hists, histRef{id: p.id, ti: uint32(ti), round: round})
		}
		if st.v2 {
			g.put2(st, p)
		} else {
			g.put1(st, p)
		}
		if k := len(b.segs) - 1; k >= 0 && b.segs[k].id == p.id && uint64(b.segs[k].hi) == ti {
			b.segs[k].hi++
		} else {
			b.segs = append(b.segs, segment{id: p.id, lo: uint32(ti), hi: uint32(ti) + 1})
		}
		if ti++; ti == g.spt {
			ti = 0
			if slot++; slot == g.local {
				slot = 0
				round++
			}
		}
	}
	if st.v2 {
		st.w2.req.Timeseries = st.w2.ts[:n]
	} else {
		st.req.Timeseries = st.ts[:n]
	}
}

// place is one sample of a request: series j of the request, template
// series t of the target in slot (instance id, value inst), at round,
// stamped ms.
type place struct {
	t         *tseries
	j         int
	slot      uint64
	id, round uint64
	inst      string
	ms        int64
}

// put1 writes p's series into st's remote write 1.0 request: its labels
// with instance and job filled in, its sample or native histogram, and
// an exemplar when it takes one.
func (g *generator) put1(st *builder, p place) {
	t, j := p.t, p.j
	start := len(st.labels)
	st.labels = append(st.labels, t.labels...)
	ls := st.labels[start:len(st.labels):len(st.labels)]
	ls[t.inst].Value, ls[t.job].Value = p.inst, g.job
	st.ts[j] = prompb.TimeSeries{Labels: ls}
	if t.kind == nhist {
		st.ts[j].Histograms = st.hs.add1(t, p.id, p.round, p.ms)
	} else {
		st.samples[j] = prompb.Sample{Value: t.value(p.id, p.round), Timestamp: p.ms}
		st.ts[j].Samples = st.samples[j : j+1 : j+1]
	}
	if trace, v, ok := g.exemplar(t, p.id, p.round); ok {
		st.ts[j].Exemplars = st.ex.add1(trace, v, p.ms)
		st.batch.exemplars++
		st.bound += exemplarBound + len(traceIDLabel) + len(trace)
	}
}

// put2 is put1 for remote write 2.0: labels and help as symbol refs.
func (g *generator) put2(st *builder, p place) {
	t, j := p.t, p.j
	ts := st.w2.series(&g.sym, t, j, p.slot, p.inst)
	if t.kind == nhist {
		ts.Histograms = st.hs.add2(t, p.id, p.round, p.ms)
	} else {
		st.w2.samples[j] = writev2.Sample{Value: t.value(p.id, p.round), Timestamp: p.ms}
		ts.Samples = st.w2.samples[j : j+1 : j+1]
	}
	if trace, v, ok := g.exemplar(t, p.id, p.round); ok {
		ts.Exemplars = st.ex.add2(&st.w2, &g.sym, g.traceSym, trace, v, p.ms)
		st.batch.exemplars++
		st.bound += exemplarBound + len(traceIDLabel) + len(trace)
	}
}
