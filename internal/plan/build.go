package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// A plan can be built in Go rather than decoded: perflab http builds one
// from its flags, with the position of each value it sets being the flag
// that gave it, so that every check of a plan file (Validate, the drivers'
// params, the run's compile) reports a problem with a flag by the flag's
// name.

// SetPos records where the value of key ("name", "duration", …) of a plan
// built in Go came from. Validate takes a key with a position as given.
func (p *Plan) SetPos(key string, at Pos) { p.at = p.at.set(key, at) }

// SetPos is Plan.SetPos for a profile ("duration", "warmup", …).
func (p *Profile) SetPos(key string, at Pos) { p.at = p.at.set(key, at) }

// SetPos is Plan.SetPos for a workload ("rate", "vus.max", …); "vus"
// stands for the pool as a whole, as when the closed model refuses it.
func (w *Workload) SetPos(key string, at Pos) { w.at = w.at.set(key, at) }

func (w where) set(key string, at Pos) where {
	if w == nil {
		w = where{}
	}
	w[key] = at
	return w
}

// Param is one key of a workload's params built in Go (ParamsOf).
type Param struct {
	Key   string
	Value any    // a string, a whole number, a bool or a map[string]string
	Flag  string // the flag that gave it ("--body-file"); "" for none
}

// ParamsOf builds a workload's params from a command line's values, in
// order. They are taken as they are: a ${NAME} or {{name}} in them is
// text, not a reference. A problem with one names its flag (Flag).
func ParamsOf(ps ...Param) (Params, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	flags := map[string]string{}
	for _, p := range ps {
		var v yaml.Node
		if err := v.Encode(p.Value); err != nil {
			return Params{}, fmt.Errorf("cannot encode param %s: %w", p.Key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.Key}, &v)
		flags[p.Key] = p.Flag
	}
	return Params{node: m, flags: flags}, nil
}

// FromFlags reports whether the params were built from a command line
// (ParamsOf): a problem with one of them names its flag, not params.
func (p Params) FromFlags() bool { return p.flags != nil }

// Flag is the flag that gave key, for params built from a command line;
// "" when none did.
func (p Params) Flag(key string) string { return p.flags[key] }
