package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// IsZero reports whether the workload gave no params.
func (p Params) IsZero() bool { return p.node == nil }

// Pos is where the params mapping starts in the plan file.
func (p Params) Pos() Pos {
	if p.node == nil {
		return Pos{}
	}
	return posOf(p.node)
}

// Decode fills v, a non-nil pointer (usually to a driver's config struct),
// from the params. References in string values are substituted first: all
// of them for the params of an Instance; only ${NAME} for those of a Plan,
// whose {{name}} references stay as written. A value that is exactly one
// reference takes the type its substituted text has in YAML, so
// `port: "{{port}}"` can fill an int.
//
// Decoding is strict: struct fields are matched by their yaml tags (or
// lowercased names) as go.yaml.in/yaml/v3 does, and unknown or duplicate
// keys, wrong types and bad values are reported together as Errors, each at
// its position in the plan file. Embedded structs need the ",inline" tag
// option; inline maps are not supported. Types implementing yaml.Unmarshaler
// or encoding.TextUnmarshaler decode themselves. Absent params leave v as
// it is.
func (p Params) Decode(v any) error {
	if p.node == nil {
		return nil
	}
	n, errs := p.expanded()
	if len(errs) > 0 {
		return errs.sorted()
	}
	return decodeStrict(p.file, n, v)
}

// expanded returns a copy of the params with references substituted;
// params built from flags have none.
func (p Params) expanded() (*yaml.Node, Errors) {
	if p.FromFlags() {
		return p.node, nil
	}
	var errs Errors
	var walk func(n *yaml.Node, isKey bool) *yaml.Node
	walk = func(n *yaml.Node, isKey bool) *yaml.Node {
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = walk(child, n.Kind == yaml.MappingNode && i%2 == 0)
		}
		if n.Kind != yaml.ScalarNode || isKey || n.ShortTag() != "!!str" {
			return &c
		}
		x := &expander{file: p.file, vars: p.vars, env: p.env}
		if p.vars == nil {
			x.vars = map[string]string{}
		}
		c.Value = x.substituteKeeping(where{"": posOf(n)}, n.Value, p.vars == nil)
		errs = append(errs, x.errs...)
		if c.Value != n.Value && wholeRef(n.Value) {
			c.Tag, c.Style = "", 0 // let YAML resolve the substituted text
		}
		return &c
	}
	return walk(p.node, false), errs
}

// substituteKeeping substitutes s; with keepVars, {{name}} references are
// left as written.
func (x *expander) substituteKeeping(w where, s string, keepVars bool) string {
	if !keepVars {
		return x.str(w, "params", s)
	}
	out, err := substitute(s, func(r ref) string {
		if !r.env {
			return r.String()
		}
		v, _ := x.env.lookup(r.name)
		return v
	})
	if err != nil {
		return s
	}
	return out
}

// JSON returns the params as written in the plan, references unexpanded
// (so ${TOKEN} stays "${TOKEN}"), with keys in file order: the form to
// store with a run. Absent params give {}.
func (p Params) JSON() (json.RawMessage, error) {
	if p.node == nil {
		return json.RawMessage("{}"), nil
	}
	var b bytes.Buffer
	if err := writeJSON(&b, p.node); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MarshalJSON is JSON, so that a Plan marshals without secrets.
func (p Params) MarshalJSON() ([]byte, error) { return p.JSON() }

// writeJSON writes a node tree as JSON.
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("cannot write params as JSON: key at line %d is not a string", k.Line)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		b.WriteString(scalarJSON(n))
	}
	return nil
}

// scalarJSON gives a scalar's JSON text according to its YAML type.
func scalarJSON(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		var v bool
		if n.Decode(&v) == nil {
			return strconv.FormatBool(v)
		}
	case "!!int":
		var v int64
		if n.Decode(&v) == nil {
			return strconv.FormatInt(v, 10)
		}
	case "!!float":
		var v float64
		if n.Decode(&v) == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	var b bytes.Buffer
	writeString(&b, n.Value)
	return b.String()
}

func writeString(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s) // a string always marshals
	b.Write(out)
}
