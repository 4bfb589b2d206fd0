package otlpdriver

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// checkTrace checks the structure of one trace against p: span count, one
// root that is spans[0], every parent in the trace and earlier, depth
// consistent and within p.Depth, children inside their parent's time,
// services from p, attribute counts and filler sizes, unique span IDs.
func checkTrace(t *testing.T, p ShapeParams, g *generator, tr *trace) {
	t.Helper()
	n := len(tr.spans)
	if n < p.Spans.Min || n > p.Spans.Max {
		t.Fatalf("%d spans, want %d to %d", n, p.Spans.Min, p.Spans.Max)
	}
	ids := map[[8]byte]bool{}
	roots := 0
	for i := range tr.spans {
		sp := &tr.spans[i]
		if ids[sp.id] {
			t.Fatalf("span %d: span ID repeated", i)
		}
		ids[sp.id] = true
		switch {
		case sp.parent < 0:
			roots++
			if i != 0 || sp.depth != 1 {
				t.Fatalf("span %d is a root at depth %d", i, sp.depth)
			}
		case int(sp.parent) >= i:
			t.Fatalf("span %d: parent %d does not exist before it", i, sp.parent)
		default:
			par := &tr.spans[sp.parent]
			if sp.depth != par.depth+1 {
				t.Fatalf("span %d: depth %d under a parent at depth %d", i, sp.depth, par.depth)
			}
			if sp.start < par.start || sp.end > par.end || sp.end < sp.start {
				t.Fatalf("span %d: [%d, %d] not within its parent's [%d, %d]", i, sp.start, sp.end, par.start, par.end)
			}
		}
		if int(sp.depth) > p.Depth {
			t.Fatalf("span %d at depth %d, deeper than %d", i, sp.depth, p.Depth)
		}
		if int(sp.service) >= len(p.Services) || g.services[sp.service].name != p.Services[sp.service] {
			t.Fatalf("span %d: service %d is not one of %v", i, sp.service, p.Services)
		}
		if sp.name == "" || sp.kind < kindInternal || sp.kind > kindConsumer {
			t.Fatalf("span %d: name %q kind %d", i, sp.name, sp.kind)
		}
		checkAttrs(t, p, i, sp.attrs)
	}
	if roots != 1 {
		t.Fatalf("%d roots, want 1", roots)
	}
}

func checkAttrs(t *testing.T, p ShapeParams, i int, attrs []attr) {
	t.Helper()
	if len(attrs) < p.Attributes.Min || len(attrs) > p.Attributes.Max {
		t.Fatalf("span %d: %d attributes, want %d to %d", i, len(attrs), p.Attributes.Min, p.Attributes.Max)
	}
	keys := map[string]bool{}
	for _, a := range attrs {
		if keys[a.key] {
			t.Fatalf("span %d: attribute %q repeated", i, a.key)
		}
		keys[a.key] = true
		if strings.HasPrefix(a.key, "app.attr_") && (len(a.str) < p.AttributeSize.Min || len(a.str) > p.AttributeSize.Max) {
			t.Fatalf("span %d: filler value of %d bytes, want %d to %d", i, len(a.str), p.AttributeSize.Min, p.AttributeSize.Max)
		}
	}
}

func TestNamedShapes(t *testing.T) {
	testutil.OneGoroutine(t)
	want := map[string]Range{
		ShapeSmall: {8, 15}, ShapeMedium: {25, 40}, ShapeLarge: {50, 80}, ShapeXLarge: {100, 150},
	}
	now := time.Now()
	for name, spans := range want {
		t.Run(name, func(t *testing.T) {
			p, ok := NamedShape(name)
			if !ok || p.Spans != spans {
				t.Fatalf("NamedShape(%q) = %v, %v; want spans %v", name, p.Spans, ok, spans)
			}
			g := newGenerator(p, 7, 0)
			var tr trace
			seen := map[int]bool{}
			services := map[uint16]bool{}
			deepest := 0
			for range 2000 {
				g.trace(&tr, now)
				checkTrace(t, p, g, &tr)
				seen[len(tr.spans)] = true
				for _, sp := range tr.spans {
					services[sp.service] = true
					deepest = max(deepest, int(sp.depth))
				}
			}
			if !seen[spans.Min] || !seen[spans.Max] {
				t.Errorf("span counts seen do not reach both ends of %v", spans)
			}
			if len(services) != len(p.Services) {
				t.Errorf("%d of %d services used over 2000 traces", len(services), len(p.Services))
			}
			if deepest != p.Depth {
				t.Errorf("deepest span at depth %d over 2000 traces, want %d reached", deepest, p.Depth)
			}
		})
	}
}

func TestCustomShape(t *testing.T) {
	p := ShapeParams{
		Spans: Range{3, 6}, Depth: 2, Services: []string{"gateway", "orders", "billing"},
		Attributes: Range{12, 20}, AttributeSize: Range{100, 120}, ResourceAttributes: 20,
		SpanDuration: DurationRange{time.Second, 2 * time.Second}, ErrorRate: 1,
	}
	if errs := p.validate(); len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	g := newGenerator(p, 3, 0)
	now := time.Now()
	var tr trace
	fillers := 0
	for range 500 {
		g.trace(&tr, now)
		checkTrace(t, p, g, &tr)
		root := tr.spans[0]
		if d := time.Duration(root.end - root.start); d < p.SpanDuration.Min || d > p.SpanDuration.Max || root.end != uint64(now.UnixNano()) {
			t.Fatalf("root lasts %v ending at %d, want %v to %v ending now", d, root.end, p.SpanDuration.Min, p.SpanDuration.Max)
		}
		for _, sp := range tr.spans {
			if sp.status != statusError || sp.statusMsg == "" {
				t.Fatalf("error_rate 1: span status %d %q", sp.status, sp.statusMsg)
			}
			for _, a := range sp.attrs {
				if strings.HasPrefix(a.key, "app.attr_") {
					fillers++
				}
			}
		}
	}
	if fillers == 0 {
		t.Error("20 attributes per span but no filler attribute generated")
	}
	for _, s := range g.services {
		if len(s.resource) != 20 || s.resource[0].key != "service.name" || s.resource[0].str != s.name {
			t.Fatalf("service %s: resource %v, want 20 attributes starting with service.name", s.name, s.resource)
		}
		for _, a := range s.resource[15:] {
			if len(a.str) < 100 || len(a.str) > 120 {
				t.Fatalf("resource filler %s of %d bytes, want 100 to 120", a.key, len(a.str))
			}
		}
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	p, _ := NamedShape(ShapeSmall)
	now := time.Unix(1_800_000_000, 0)
	gen := func(seed, stream uint64) []trace {
		g := newGenerator(p, seed, stream)
		out := make([]trace, 50)
		for i := range out {
			g.trace(&out[i], now)
		}
		return out
	}
	a, b := gen(11, 1), gen(11, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed and stream gave different traces")
	}
	c, d := gen(12, 1), gen(11, 2)
	if a[0].id == c[0].id || a[0].id == d[0].id {
		t.Error("another seed or stream gave the same first trace ID")
	}
}

func TestShapeValidate(t *testing.T) {
	bad := ShapeParams{
		Spans: Range{5, 2}, Depth: 0, Services: []string{"a", "a", ""}, Attributes: Range{-1, 3},
		AttributeSize: Range{0, 1 << 20}, ResourceAttributes: 500,
		SpanDuration: DurationRange{time.Second, time.Millisecond}, ErrorRate: 2,
	}
	errs := bad.validate()
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	for _, want := range []string{"spans", "depth", "services", "attributes", "attribute_size", "resource_attributes", "span_duration", "error_rate"} {
		if !slices.ContainsFunc(msgs, func(m string) bool {
			return strings.HasPrefix(m, "custom: "+want+" ") || strings.HasPrefix(m, "custom: "+want+":")
		}) {
			t.Errorf("no error about %s in %q", want, msgs)
		}
	}
	one := ShapeParams{Spans: Range{1, 3}, Depth: 1}.withDefaults()
	if errs := one.validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "depth 1") {
		t.Errorf("depth 1 with spans.max 3: %v", errs)
	}
}
