package otlpdriver

import (
	"fmt"
	"time"
)

// The named trace shapes Config.Shape accepts; ShapeCustom takes its
// parameters from Config.Custom.
const (
	ShapeSmall  = "small"
	ShapeMedium = "medium"
	ShapeLarge  = "large"
	ShapeXLarge = "xlarge"
	ShapeCustom = "custom"
)

// Range is an inclusive range of whole numbers: span counts, attribute
// counts, value sizes in bytes.
type Range struct {
	Min int `yaml:"min"`
	Max int `yaml:"max"`
}

// DurationRange is an inclusive range of durations; in YAML each bound is
// a duration string like "20ms".
type DurationRange struct {
	Min time.Duration `yaml:"min"`
	Max time.Duration `yaml:"max"`
}

// ShapeParams says what the traces of a workload look like. A zero field
// of a custom shape takes the value of the medium shape.
type ShapeParams struct {
	// Spans is the number of spans per trace, drawn uniformly.
	Spans Range `yaml:"spans"`
	// Depth is the deepest level of the span tree; the root is level 1.
	Depth int `yaml:"depth"`
	// Services are the service names; the first is the root's (the entry
	// point, "frontend" in the named shapes). Known names (see Services)
	// get realistic operation names; others get generic ones.
	Services []string `yaml:"services"`
	// Attributes is the number of attributes per span. Standard keys for
	// the span's kind (http.route, db.system, rpc.method, …) come first;
	// past them, filler keys app.attr_N carry values of AttributeSize.
	Attributes Range `yaml:"attributes"`
	// AttributeSize is the length in bytes of a filler attribute value.
	AttributeSize Range `yaml:"attribute_size"`
	// ResourceAttributes is the number of attributes of each service's
	// resource, service.name included; standard keys first, then fillers.
	ResourceAttributes int `yaml:"resource_attributes"`
	// SpanDuration is the root span's duration, drawn log-uniformly; each
	// child lies within its parent.
	SpanDuration DurationRange `yaml:"span_duration"`
	// ErrorRate is the fraction of spans with status ERROR, in [0, 1].
	ErrorRate float64 `yaml:"error_rate"`
}

// Services returns the service names the named shapes draw from, in
// order: a shape with n services uses the first n.
func Services() []string {
	return []string{
		"frontend", "cart", "checkout", "payment", "shipping", "currency",
		"product-catalog", "recommendation", "ad", "email", "quote",
		"fraud-detection", "accounting", "inventory", "auth",
	}
}

// NamedShape returns the parameters of a named shape, or false.
//
//	shape   spans    depth services attributes value bytes resource attrs root duration
//	small   8–15     4     4        6–10       8–32        6              20ms–300ms
//	medium  25–40    6     8        8–12       16–64       8              50ms–1s
//	large   50–80    8     12       10–15      16–128      10             100ms–2s
//	xlarge  100–150  10    15       10–20      16–256      12             200ms–5s
func NamedShape(name string) (ShapeParams, bool) {
	s := func(spans Range, depth, services int, attrs, size Range, res int, dur DurationRange) ShapeParams {
		return ShapeParams{Spans: spans, Depth: depth, Services: Services()[:services],
			Attributes: attrs, AttributeSize: size, ResourceAttributes: res,
			SpanDuration: dur, ErrorRate: 0.01}
	}
	ms := time.Millisecond
	switch name {
	case ShapeSmall:
		return s(Range{8, 15}, 4, 4, Range{6, 10}, Range{8, 32}, 6, DurationRange{20 * ms, 300 * ms}), true
	case ShapeMedium:
		return s(Range{25, 40}, 6, 8, Range{8, 12}, Range{16, 64}, 8, DurationRange{50 * ms, time.Second}), true
	case ShapeLarge:
		return s(Range{50, 80}, 8, 12, Range{10, 15}, Range{16, 128}, 10, DurationRange{100 * ms, 2 * time.Second}), true
	case ShapeXLarge:
		return s(Range{100, 150}, 10, 15, Range{10, 20}, Range{16, 256}, 12, DurationRange{200 * ms, 5 * time.Second}), true
	}
	return ShapeParams{}, false
}

// withDefaults fills the zero fields of a custom shape from medium.
func (p ShapeParams) withDefaults() ShapeParams {
	m, _ := NamedShape(ShapeMedium)
	if p.Spans == (Range{}) {
		p.Spans = m.Spans
	}
	if p.Depth == 0 {
		p.Depth = m.Depth
	}
	if len(p.Services) == 0 {
		p.Services = m.Services
	}
	if p.Attributes == (Range{}) {
		p.Attributes = m.Attributes
	}
	if p.AttributeSize == (Range{}) {
		p.AttributeSize = m.AttributeSize
	}
	if p.ResourceAttributes == 0 {
		p.ResourceAttributes = m.ResourceAttributes
	}
	if p.SpanDuration == (DurationRange{}) {
		p.SpanDuration = m.SpanDuration
	}
	return p
}

// maxSpans bounds a custom shape: one trace must fit a gRPC message (4 MiB
// by default on servers) with room to spare.
const maxSpans = 10000

// validate reports every problem with p, a custom shape after defaults.
func (p ShapeParams) validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("custom: "+format, a...)) }
	rng := func(name string, r Range, lo, hi int) {
		if r.Min < lo || r.Max > hi || r.Min > r.Max {
			add("%s {min: %d, max: %d}: want %d <= min <= max <= %d", name, r.Min, r.Max, lo, hi)
		}
	}
	rng("spans", p.Spans, 1, maxSpans)
	rng("attributes", p.Attributes, 0, 128)
	rng("attribute_size", p.AttributeSize, 0, 64<<10)
	switch {
	case p.Depth < 1 || p.Depth > 255:
		add("depth %d: want 1 to 255", p.Depth)
	case p.Depth == 1 && p.Spans.Max > 1:
		add("depth 1 leaves room for the root span only, but spans.max is %d", p.Spans.Max)
	}
	seen := map[string]bool{}
	for _, s := range p.Services {
		if s == "" || seen[s] {
			add("services: %q is empty or repeated", s)
		}
		seen[s] = true
	}
	if len(p.Services) > 1000 {
		add("services: %d names, want at most 1000", len(p.Services))
	}
	if p.ResourceAttributes < 1 || p.ResourceAttributes > 128 {
		add("resource_attributes %d: want 1 to 128 (service.name is one)", p.ResourceAttributes)
	}
	if d := p.SpanDuration; d.Min <= 0 || d.Min > d.Max {
		add("span_duration {min: %v, max: %v}: want 0 < min <= max", d.Min, d.Max)
	}
	if p.ErrorRate < 0 || p.ErrorRate > 1 {
		add("error_rate %v: want 0 to 1", p.ErrorRate)
	}
	return errs
}

// String describes the shape in one line, for Facts.
func (p ShapeParams) String() string {
	return fmt.Sprintf("%d–%d spans, depth ≤ %d, %d services, %d–%d attributes per span of %d–%d B filler values, %d resource attributes, root %v–%v",
		p.Spans.Min, p.Spans.Max, p.Depth, len(p.Services), p.Attributes.Min, p.Attributes.Max,
		p.AttributeSize.Min, p.AttributeSize.Max, p.ResourceAttributes, p.SpanDuration.Min, p.SpanDuration.Max)
}
