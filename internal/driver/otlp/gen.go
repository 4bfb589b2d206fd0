package otlpdriver

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"time"
)

// attr is one attribute: a string value, or an int when isInt.
type attr struct {
	key   string
	str   string
	num   int64
	isInt bool
	size  int32 // the encoded KeyValue's length, set by the encoder
}

// span is one generated span. parent is the index of the parent in its
// trace's spans, -1 for the root; depth is 1 for the root.
type span struct {
	id         [8]byte
	parent     int32
	depth      uint8
	kind       uint8
	status     uint8 // 0 unset or statusError
	service    uint16
	name       string
	statusMsg  string
	start, end uint64 // Unix nanoseconds
	attrs      []attr
	size       int // the encoded Span message's length, set by the encoder
}

// trace is one generated trace; spans[0] is the root.
type trace struct {
	id    [16]byte
	spans []span
}

// generator makes traces of one shape. It is deterministic: the same
// params, seed and stream give the same traces for the same now. Not safe
// for concurrent use; each VU has its own.
type generator struct {
	p        ShapeParams
	rng      *rand.Rand
	voc      *vocabulary
	services []service
	filler   string  // random [a-z0-9] text filler values are cut from
	open     []int32 // spans of the trace being built that may have children
	logMin   float64 // ln of the root duration bounds, in ns
	logMax   float64
}

func newGenerator(p ShapeParams, seed, stream uint64) *generator {
	g := &generator{
		p:      p,
		rng:    rand.New(rand.NewPCG(seed, stream)),
		voc:    newVocabulary(),
		logMin: math.Log(float64(p.SpanDuration.Min)),
		logMax: math.Log(float64(p.SpanDuration.Max)),
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	f := make([]byte, max(8192, 2*p.AttributeSize.Max))
	for i := range f {
		f[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	g.filler = string(f)
	for i := range p.Services {
		s := newService(p.Services, i)
		s.resource = g.resource(s)
		g.services = append(g.services, s)
	}
	return g
}

// resource builds the fixed resource attributes of a service.
func (g *generator) resource(s service) []attr {
	pod := s.name + "-7d9f8b6c4-" + g.fill(5)
	std := []attr{
		{key: "service.name", str: s.name},
		{key: "service.namespace", str: "shop"},
		{key: "service.version", str: "1.12.0"},
		{key: "service.instance.id", str: hex.EncodeToString([]byte(g.fill(16)))[:32]},
		{key: "deployment.environment.name", str: "production"},
		{key: "host.name", str: pod},
		{key: "k8s.namespace.name", str: "shop"},
		{key: "k8s.pod.name", str: pod},
		{key: "k8s.deployment.name", str: s.name},
		{key: "telemetry.sdk.language", str: "go"},
		{key: "telemetry.sdk.name", str: "opentelemetry"},
		{key: "telemetry.sdk.version", str: "1.32.0"},
		{key: "cloud.region", str: "eu-west-1"},
		{key: "process.pid", num: g.voc.pids[g.rng.IntN(len(g.voc.pids))], isInt: true},
		{key: "os.type", str: "linux"},
	}
	n := g.p.ResourceAttributes
	out := std[:min(n, len(std))]
	for i := 0; len(out) < n; i++ {
		out = append(out, attr{key: g.voc.resFiller[i], str: g.fillSized()})
	}
	return out
}

// fill returns n random filler characters.
func (g *generator) fill(n int) string {
	off := g.rng.IntN(len(g.filler) - n + 1)
	return g.filler[off : off+n]
}

// fillSized returns a filler value of a length in AttributeSize.
func (g *generator) fillSized() string {
	return g.fill(g.between(g.p.AttributeSize.Min, g.p.AttributeSize.Max))
}

func (g *generator) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *generator) pick(list []string) int { return g.rng.IntN(len(list)) }

// trace fills t with a new trace that ends at now, reusing t's slices.
func (g *generator) trace(t *trace, now time.Time) {
	binary.LittleEndian.PutUint64(t.id[:8], g.rng.Uint64())
	binary.LittleEndian.PutUint64(t.id[8:], g.rng.Uint64()|1) // never all zero
	n := g.between(g.p.Spans.Min, g.p.Spans.Max)
	if cap(t.spans) < n {
		t.spans = append(t.spans[:cap(t.spans)], make([]span, n-cap(t.spans))...)
	}
	t.spans = t.spans[:n]
	g.open = g.open[:0]

	root := &t.spans[0]
	dur := uint64(math.Exp(g.logMin + g.rng.Float64()*(g.logMax-g.logMin)))
	end := uint64(now.UnixNano())
	g.span(root, -1, 1, 0, catHTTPServer, end-dur, end)
	for i := 1; i < n; i++ {
		pi := g.parent(t.spans[:i])
		p := &t.spans[pi]
		svc, cat := g.child(p)
		start, end := g.within(p.start, p.end)
		g.span(&t.spans[i], pi, p.depth+1, svc, cat, start, end)
	}
}

// parent picks the parent of the next span: often the span just made, so
// that call chains go deep, else any span with room below it.
func (g *generator) parent(spans []span) int32 {
	last := int32(len(spans) - 1)
	if int(spans[last].depth) < g.p.Depth {
		g.open = append(g.open, last)
		if g.rng.IntN(10) < 4 {
			return last
		}
	}
	return g.open[g.rng.IntN(len(g.open))]
}

// child decides the service and category of a child of p: a call to
// another service half the time, else a database, cache, messaging or
// in-process span of p's own service.
func (g *generator) child(p *span) (uint16, category) {
	n := len(g.services)
	if n > 1 && g.rng.IntN(2) == 0 {
		other := uint16(g.rng.IntN(n - 1))
		if other >= p.service {
			other++
		}
		if g.rng.IntN(10) == 0 {
			return other, catConsumer
		}
		if other == 0 { // the entry point is called by no one else
			return p.service, catInternal
		}
		return other, catRPCServer
	}
	switch r := g.rng.IntN(20); {
	case r < 6:
		return p.service, catDB
	case r < 9:
		return p.service, catCache
	case r < 10:
		return p.service, catProducer
	}
	return p.service, catInternal
}

// within returns a child's interval inside its parent's [start, end].
func (g *generator) within(start, end uint64) (uint64, uint64) {
	d := float64(end - start)
	s := start + uint64(g.rng.Float64()*0.6*d)
	e := s + uint64((0.1+0.85*g.rng.Float64())*float64(end-s))
	return s, min(max(e, s+1000), end)
}

// span fills sp, reusing its attrs slice.
func (g *generator) span(sp *span, parent int32, depth uint8, svc uint16, cat category, start, end uint64) {
	binary.LittleEndian.PutUint64(sp.id[:], g.rng.Uint64()|1)
	sp.parent, sp.depth, sp.service, sp.kind = parent, depth, svc, cat.kind()
	sp.start, sp.end = start, end
	sp.status, sp.statusMsg = 0, ""
	failed := g.p.ErrorRate > 0 && g.rng.Float64() < g.p.ErrorRate
	if failed {
		sp.status, sp.statusMsg = statusError, g.voc.errors[g.pick(g.voc.errors)]
	}
	want := g.between(g.p.Attributes.Min, g.p.Attributes.Max)
	sp.attrs = g.standard(sp, &g.services[svc], cat, failed, sp.attrs[:0], want)
	for i := 0; len(sp.attrs) < want; i++ {
		sp.attrs = append(sp.attrs, attr{key: g.voc.fillerKeys[i], str: g.fillSized()})
	}
}
