package otlpdriver

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// toProto builds, with the OTLP Go types, the request encode should write
// for traces: one ResourceSpans per service with spans, in service order.
func toProto(g *generator, traces []trace) *coltracepb.ExportTraceServiceRequest {
	req := &coltracepb.ExportTraceServiceRequest{}
	for svc := range g.services {
		var spans []*tracepb.Span
		for ti := range traces {
			t := &traces[ti]
			for si := range t.spans {
				if sp := &t.spans[si]; int(sp.service) == svc {
					spans = append(spans, spanProto(t, sp))
				}
			}
		}
		if len(spans) == 0 {
			continue
		}
		req.ResourceSpans = append(req.ResourceSpans, &tracepb.ResourceSpans{
			Resource: &resourcepb.Resource{Attributes: kvProtos(g.services[svc].resource)},
			ScopeSpans: []*tracepb.ScopeSpans{{
				Scope: &commonpb.InstrumentationScope{Name: ScopeName, Version: ScopeVersion},
				Spans: spans,
			}},
		})
	}
	return req
}

func spanProto(t *trace, sp *span) *tracepb.Span {
	p := &tracepb.Span{
		TraceId:           append([]byte(nil), t.id[:]...),
		SpanId:            append([]byte(nil), sp.id[:]...),
		Name:              sp.name,
		Kind:              tracepb.Span_SpanKind(sp.kind),
		StartTimeUnixNano: sp.start,
		EndTimeUnixNano:   sp.end,
		Attributes:        kvProtos(sp.attrs),
	}
	if sp.parent >= 0 {
		p.ParentSpanId = append([]byte(nil), t.spans[sp.parent].id[:]...)
	}
	if sp.status != 0 {
		p.Status = &tracepb.Status{Code: tracepb.Status_StatusCode(sp.status), Message: sp.statusMsg}
	}
	return p
}

func kvProtos(attrs []attr) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, a := range attrs {
		v := &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: a.str}}
		if a.isInt {
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: a.num}}
		}
		out = append(out, &commonpb.KeyValue{Key: a.key, Value: v})
	}
	return out
}

// TestEncodeDecodes checks that what the encoder writes decodes with the
// OTLP protos to exactly the generated traces, for every named shape, for
// batches of 1 and 7, with errors on many spans so that Status is covered.
func TestEncodeDecodes(t *testing.T) {
	testutil.OneGoroutine(t)
	now := time.Unix(1_800_000_000, 0)
	for _, name := range []string{ShapeSmall, ShapeMedium, ShapeLarge, ShapeXLarge} {
		p, _ := NamedShape(name)
		p.ErrorRate = 0.3
		for _, batch := range []int{1, 7} {
			g := newGenerator(p, 42, 0)
			e := newEncoder(g.services)
			traces := make([]trace, batch)
			var buf []byte
			for range 5 { // reuse of trace and attribute slices included
				for i := range traces {
					g.trace(&traces[i], now)
				}
				buf = e.encode(buf[:0], traces)
				got := &coltracepb.ExportTraceServiceRequest{}
				if err := proto.Unmarshal(buf, got); err != nil {
					t.Fatalf("%s batch %d: cannot decode: %v", name, batch, err)
				}
				want := toProto(g, traces)
				if !proto.Equal(got, want) {
					t.Fatalf("%s batch %d: decoded request differs from the generated traces", name, batch)
				}
				if n := proto.Size(want); n != len(buf) {
					t.Errorf("%s batch %d: encoded %d bytes, proto.Size says %d", name, batch, len(buf), n)
				}
			}
		}
	}
}

func TestEncodeAllocatesNothingOnceWarm(t *testing.T) {
	p, _ := NamedShape(ShapeMedium)
	g := newGenerator(p, 1, 0)
	e := newEncoder(g.services)
	traces := make([]trace, 4)
	now := time.Now()
	buf := make([]byte, 0, 1<<20)
	run := func() {
		for i := range traces {
			g.trace(&traces[i], now)
		}
		buf = e.encode(buf[:0], traces)
	}
	for range 1000 { // until every span slot has held the most attributes
		run()
	}
	if n := testing.AllocsPerRun(50, run); n > 0 {
		t.Errorf("generate + encode allocates %.1f times per batch once warm, want 0", n)
	}
}
