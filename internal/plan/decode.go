package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perflab/perflab/internal/units"
)

// decoder walks a YAML node tree, collecting every problem it meets.
type decoder struct {
	file   string
	lookup func(string) (string, bool)
	env    *envValues // ${NAME} references found and set
	errs   Errors
	merged map[*yaml.Node]*yaml.Node // each mapping with its merge keys applied
}

func newDecoder(file string, lookup func(string) (string, bool)) *decoder {
	return &decoder{file: file, lookup: lookup, env: &envValues{values: map[string]string{}},
		merged: map[*yaml.Node]*yaml.Node{}}
}

func posOf(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

func (d *decoder) errorAt(p Pos, format string, a ...any) {
	d.errs = append(d.errs, Error{File: d.file, Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, a...)})
}

func (d *decoder) errorf(n *yaml.Node, format string, a ...any) {
	d.errorAt(posOf(n), format, a...)
}

// node resolves an alias and applies a mapping's merge keys; it returns
// nil for an alias to nothing. tooManyNodes checked the plan's size
// before: a walk through node is bounded by MaxNodes.
func (d *decoder) node(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.MappingNode {
		return d.merge(n)
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName names what n is, for "want X, got Y" messages.
func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

// fields checks that n is a mapping whose keys are among keys, each once,
// and returns the values by key. Null values count as absent. It records
// the mapping's position in at[""] and each value's in at[key].
func (d *decoder) fields(n *yaml.Node, what string, at where, keys string) map[string]*yaml.Node {
	at[""] = posOf(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: want a mapping with keys %s, got %s", what, keys, kindName(n))
		return nil
	}
	m := map[string]*yaml.Node{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := d.node(n.Content[i]), d.node(n.Content[i+1])
		if k == nil || v == nil {
			return m
		}
		key, ok := d.key(k, what, seen, keys)
		if !ok || isNull(v) {
			continue
		}
		m[key] = v
		at[key] = posOf(v)
	}
	return m
}

// key checks one mapping key.
func (d *decoder) key(k *yaml.Node, what string, seen map[string]int, keys string) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		d.errorf(k, "%s: a key must be a string, got %s", what, kindName(k))
		return "", false
	}
	if line, dup := seen[k.Value]; dup {
		d.errorf(k, "%s: duplicate key %q (first on line %d)", what, k.Value, line)
		return "", false
	}
	seen[k.Value] = k.Line
	if keys != "" && !slices.Contains(strings.Split(keys, ", "), k.Value) {
		d.errorf(k, "%s: unknown key %q; want one of: %s", what, k.Value, keys)
		return "", false
	}
	return k.Value, true
}

// field calls fn with m[key] when the key was given. An error from fn is
// recorded at the value and the key marked as bad in at.
func (d *decoder) field(m map[string]*yaml.Node, at where, key string, fn func(n *yaml.Node) error) {
	n, ok := m[key]
	if !ok {
		return
	}
	if err := fn(n); err != nil {
		d.errorf(n, "%v", err)
		at[key+"!"] = posOf(n)
	}
}

// scalar returns the text of a scalar node.
func scalar(key string, n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", fmt.Errorf("%s: want a string, got %s", key, kindName(n))
	}
	return n.Value, nil
}

// text returns a template string and looks up the environment variables it
// names; a variable that is not set is reported at n.
func (d *decoder) text(key string, n *yaml.Node) (string, error) {
	s, err := scalar(key, n)
	if err != nil {
		return "", err
	}
	d.lookupEnv(s, n)
	return s, nil
}

// lookupEnv records the values of the ${NAME} references in s. Syntax
// errors are left to Validate.
func (d *decoder) lookupEnv(s string, n *yaml.Node) {
	rs, _ := refs(s)
	for _, r := range rs {
		if !r.env {
			continue
		}
		if v, ok := d.lookup(r.name); ok {
			d.env.values[r.name] = v
		} else {
			d.errorf(n, "environment variable %s is not set: export it before running the plan", r.name)
		}
	}
}

// durationOf reads a duration such as 30s or 1h30m.
func durationOf(key string, n *yaml.Node) (time.Duration, error) {
	s, err := scalar(key, n)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err == nil {
		return d, nil
	}
	if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
		return 0, fmt.Errorf("%s %q needs a unit: %ss", key, s, strings.TrimSpace(s))
	}
	return 0, fmt.Errorf("%s %q: want a duration like 30s, 5m or 1h30m", key, s)
}

// intOf reads a whole number.
func intOf(key string, n *yaml.Node) (int, error) {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil {
			return v, nil
		}
		var v int
		if n.ShortTag() == "!!int" && n.Decode(&v) == nil {
			return v, nil
		}
		return 0, fmt.Errorf("%s %q: want a whole number", key, n.Value)
	}
	return 0, fmt.Errorf("%s: want a whole number, got %s", key, kindName(n))
}

// rateOf reads an operation rate (500/s) or a byte rate (5.8MB/s).
func rateOf(key string, n *yaml.Node) (Rate, error) {
	s, err := scalar(key, n)
	if err != nil {
		return Rate{}, err
	}
	return parseRate(key, s)
}

// ParseRate reads a rate as a plan's rate: is written: an operation rate
// (500/s) or a byte rate (5.8MB/s), a unit required ("500" is refused
// with the rate meant, 500/s). The command line's rates are read by it
// too, so that a plan and a flag accept and refuse the same; key names
// the value in the error (rate, --rate).
func ParseRate(key, s string) (Rate, error) { return parseRate(key, s) }

func parseRate(key, s string) (Rate, error) {
	t := strings.TrimSpace(s)
	num, _, slash := strings.Cut(t, "/")
	_, nerr := strconv.ParseFloat(strings.TrimSpace(num), 64)
	switch {
	case !slash && nerr == nil:
		return Rate{}, fmt.Errorf("%s %q needs a unit: %s/s", key, s, t)
	case !slash && bytesOK(t):
		return Rate{}, fmt.Errorf("%s %q needs a time unit: %s/s", key, s, t)
	case slash && nerr == nil:
		if v, err := units.ParseRate(t); err == nil {
			return Rate{PerSecond: v}, nil
		}
	case slash:
		if v, err := units.ParseByteRate(t); err == nil {
			return Rate{BytesPerSecond: v}, nil
		}
	}
	return Rate{}, fmt.Errorf("%s %q: want an operation rate like 500/s or a byte rate like 5.8MB/s, per s, m, h or a duration like 100ms", key, s)
}

func bytesOK(s string) bool {
	_, err := units.ParseBytes(s)
	return err == nil
}
