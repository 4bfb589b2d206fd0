package otlpdriver

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// The encoder writes an OTLP ExportTraceServiceRequest straight from the
// generated traces with protowire, in two passes (sizes, then bytes), so
// that encoding allocates nothing once its buffers have grown. The tests
// decode its output with the OTLP Go protos.
//
// A request holds one ResourceSpans per service that has spans in the
// batch (in service order), each with one ScopeSpans ("perflab") holding
// that service's spans of every trace in the batch: what a collector that
// batches the spans of many services sends on.

// Field numbers of the OTLP messages written here.
const (
	fRequestResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fResourceSpansResource = 1 // ResourceSpans.resource
	fResourceSpansScope    = 2 // ResourceSpans.scope_spans
	fResourceAttributes    = 1 // Resource.attributes
	fScopeSpansScope       = 1 // ScopeSpans.scope
	fScopeSpansSpans       = 2 // ScopeSpans.spans
	fScopeName             = 1 // InstrumentationScope.name
	fScopeVersion          = 2 // InstrumentationScope.version

	fSpanTraceID  = 1
	fSpanID       = 2
	fSpanParentID = 4
	fSpanName     = 5
	fSpanKind     = 6
	fSpanStart    = 7
	fSpanEnd      = 8
	fSpanAttrs    = 9
	fSpanStatus   = 15
	fStatusMsg    = 2
	fStatusCode   = 3

	fKVKey      = 1
	fKVValue    = 2
	fAnyString  = 1
	fAnyInt     = 3
	bytesType   = protowire.BytesType
	varintType  = protowire.VarintType
	fixed64Type = protowire.Fixed64Type
)

// ScopeName and ScopeVersion name the instrumentation scope of every span.
const (
	ScopeName    = "perflab"
	ScopeVersion = "1"
)

// spanRef is one span of a batch.
type spanRef struct {
	t *trace
	s int32
}

// encoder encodes batches for one generator's services. Not safe for
// concurrent use.
type encoder struct {
	resources [][]byte    // per service: ResourceSpans.resource, tag included
	scope     []byte      // ScopeSpans.scope, tag included
	groups    [][]spanRef // per service: its spans in the batch
}

func newEncoder(services []service) *encoder {
	e := &encoder{groups: make([][]spanRef, len(services))}
	for _, s := range services {
		var res []byte
		for i := range s.resource {
			res = appendKV(res, fResourceAttributes, &s.resource[i])
		}
		b := protowire.AppendTag(nil, fResourceSpansResource, bytesType)
		e.resources = append(e.resources, protowire.AppendBytes(b, res))
	}
	var sc []byte
	sc = protowire.AppendTag(sc, fScopeName, bytesType)
	sc = protowire.AppendString(sc, ScopeName)
	sc = protowire.AppendTag(sc, fScopeVersion, bytesType)
	sc = protowire.AppendString(sc, ScopeVersion)
	e.scope = protowire.AppendBytes(protowire.AppendTag(nil, fScopeSpansScope, bytesType), sc)
	return e
}

// encode appends the request carrying traces to dst.
func (e *encoder) encode(dst []byte, traces []trace) []byte {
	for i := range e.groups {
		e.groups[i] = e.groups[i][:0]
	}
	for ti := range traces {
		t := &traces[ti]
		for si := range t.spans {
			sp := &t.spans[si]
			sp.size = spanSize(sp)
			e.groups[sp.service] = append(e.groups[sp.service], spanRef{t, int32(si)})
		}
	}
	for svc, group := range e.groups {
		if len(group) == 0 {
			continue
		}
		scopeSpans := len(e.scope)
		for _, r := range group {
			scopeSpans += 1 + protowire.SizeBytes(r.t.spans[r.s].size)
		}
		rs := len(e.resources[svc]) + 1 + protowire.SizeBytes(scopeSpans)
		dst = protowire.AppendTag(dst, fRequestResourceSpans, bytesType)
		dst = protowire.AppendVarint(dst, uint64(rs))
		dst = append(dst, e.resources[svc]...)
		dst = protowire.AppendTag(dst, fResourceSpansScope, bytesType)
		dst = protowire.AppendVarint(dst, uint64(scopeSpans))
		dst = append(dst, e.scope...)
		for _, r := range group {
			dst = appendSpan(dst, r.t, &r.t.spans[r.s])
		}
	}
	return dst
}

// spanSize is the length of sp's Span message.
func spanSize(sp *span) int {
	n := 2 + 16 + 2 + 8 + 1 + protowire.SizeBytes(len(sp.name)) + 9 + 9
	if sp.parent >= 0 {
		n += 2 + 8
	}
	if sp.kind != 0 {
		n += 1 + protowire.SizeVarint(uint64(sp.kind))
	}
	for i := range sp.attrs {
		a := &sp.attrs[i]
		a.size = int32(kvSize(a))
		n += 1 + protowire.SizeBytes(int(a.size))
	}
	if sp.status != 0 {
		n += 1 + protowire.SizeBytes(statusSize(sp))
	}
	return n
}

func statusSize(sp *span) int {
	n := 1 + protowire.SizeVarint(uint64(sp.status))
	if sp.statusMsg != "" {
		n += 1 + protowire.SizeBytes(len(sp.statusMsg))
	}
	return n
}

func anySize(a *attr) int {
	if a.isInt {
		return 1 + protowire.SizeVarint(uint64(a.num))
	}
	return 1 + protowire.SizeBytes(len(a.str))
}

func kvSize(a *attr) int {
	return 1 + protowire.SizeBytes(len(a.key)) + 1 + protowire.SizeBytes(anySize(a))
}

// appendSpan appends sp as field ScopeSpans.spans; sp.size must be set.
func appendSpan(b []byte, t *trace, sp *span) []byte {
	b = protowire.AppendTag(b, fScopeSpansSpans, bytesType)
	b = protowire.AppendVarint(b, uint64(sp.size))
	b = protowire.AppendTag(b, fSpanTraceID, bytesType)
	b = protowire.AppendBytes(b, t.id[:])
	b = protowire.AppendTag(b, fSpanID, bytesType)
	b = protowire.AppendBytes(b, sp.id[:])
	if sp.parent >= 0 {
		b = protowire.AppendTag(b, fSpanParentID, bytesType)
		b = protowire.AppendBytes(b, t.spans[sp.parent].id[:])
	}
	b = protowire.AppendTag(b, fSpanName, bytesType)
	b = protowire.AppendString(b, sp.name)
	if sp.kind != 0 {
		b = protowire.AppendTag(b, fSpanKind, varintType)
		b = protowire.AppendVarint(b, uint64(sp.kind))
	}
	b = protowire.AppendTag(b, fSpanStart, fixed64Type)
	b = protowire.AppendFixed64(b, sp.start)
	b = protowire.AppendTag(b, fSpanEnd, fixed64Type)
	b = protowire.AppendFixed64(b, sp.end)
	for i := range sp.attrs {
		b = appendKV(b, fSpanAttrs, &sp.attrs[i])
	}
	if sp.status != 0 {
		b = protowire.AppendTag(b, fSpanStatus, bytesType)
		b = protowire.AppendVarint(b, uint64(statusSize(sp)))
		if sp.statusMsg != "" {
			b = protowire.AppendTag(b, fStatusMsg, bytesType)
			b = protowire.AppendString(b, sp.statusMsg)
		}
		b = protowire.AppendTag(b, fStatusCode, varintType)
		b = protowire.AppendVarint(b, uint64(sp.status))
	}
	return b
}

// appendKV appends a as a KeyValue in field num; a.size is used when
// set. Tags of fields 1–15 are one byte, written as such.
func appendKV(b []byte, num protowire.Number, a *attr) []byte {
	size := int(a.size)
	if size == 0 {
		size = kvSize(a)
	}
	b = append(b, byte(num)<<3|byte(bytesType))
	b = protowire.AppendVarint(b, uint64(size))
	b = append(b, fKVKey<<3|byte(bytesType))
	b = protowire.AppendString(b, a.key)
	b = append(b, fKVValue<<3|byte(bytesType))
	if a.isInt {
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeVarint(uint64(a.num))))
		b = append(b, fAnyInt<<3|byte(varintType))
		return protowire.AppendVarint(b, uint64(a.num))
	}
	b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(a.str))))
	b = append(b, fAnyString<<3|byte(bytesType))
	return protowire.AppendString(b, a.str)
}
