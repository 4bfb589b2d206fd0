package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads the plan file at path and parses it with Parse.
func Load(path string) (*Plan, error) {
	p, err := LoadPartial(path)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Parse decodes and validates a plan. file names the plan in error messages
// and locates relative paths; environment variables are read with
// os.LookupEnv. The error, if any, is an Errors holding every problem found.
func Parse(file string, data []byte) (*Plan, error) {
	return ParseEnv(file, data, os.LookupEnv)
}

// ParseEnv is Parse with environment variables read from lookup.
func ParseEnv(file string, data []byte, lookup func(string) (string, bool)) (*Plan, error) {
	p, err := ParsePartial(file, data, lookup)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// LoadPartial is Load, except that a plan with problems is returned too,
// as far as it could be decoded, beside its Errors; see ParsePartial.
func LoadPartial(path string) (*Plan, error) {
	data, size, err := readPlan(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, size, os.LookupEnv)
}

// ParsePartial is ParseEnv, except that a plan with problems is returned
// too, as far as it could be decoded (nil when the YAML did not parse),
// beside its Errors: for callers that look for more problems in what this
// package leaves opaque, such as workload params, so that a plan's author
// sees every problem at once. Never run a plan that came with an error.
func ParsePartial(file string, data []byte, lookup func(string) (string, bool)) (*Plan, error) {
	return parse(file, data, int64(len(data)), lookup)
}

// parse is ParsePartial of a file of size bytes, of which data is all or,
// when size is over MaxBytes, the start. A plan too large is refused with
// that problem alone, before it is decoded.
func parse(file string, data []byte, size int64, lookup func(string) (string, bool)) (*Plan, error) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, fmt.Errorf("cannot locate plan directory: %w", err)
	}
	d := newDecoder(file, lookup)
	var root *yaml.Node
	if !d.tooManyBytes(size) {
		root = d.document(data)
	}
	if root == nil {
		if len(d.errs) == 0 {
			d.errorAt(Pos{}, "cannot read the plan")
		}
		return nil, d.errs.sorted()
	}
	p := d.plan(root, file, dir)
	if root.Kind != yaml.MappingNode { // Validate would only add noise
		return p, d.errs.sorted()
	}
	errs := append(d.errs, asErrors(file, p.Validate())...)
	if len(errs) > 0 {
		return p, errs.sorted()
	}
	return p, nil
}

// document parses data as exactly one YAML document and returns its root.
func (d *decoder) document(data []byte) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil { // the YAML library must not take perflab down
			d.errorAt(Pos{}, "cannot parse YAML: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorAt(Pos{Line: 1, Col: 1}, "the plan is empty")
		} else {
			d.syntax(err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.syntax(err)
		return nil
	default:
		d.errorf(&extra, "a plan is one YAML document; remove the second one")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.errorf(&doc, "the plan is empty")
		return nil
	}
	if d.tooManyNodes(doc.Content[0]) {
		return nil
	}
	return d.node(doc.Content[0])
}

// syntax records an error of the YAML parser, whose messages read
// "yaml: line N: problem" or "yaml: problem".
func (d *decoder) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, problem, _ := strings.Cut(rest, ": ")
		if line, err := strconv.Atoi(num); err == nil {
			d.errorAt(Pos{Line: line}, "invalid YAML: %s", problem)
			return
		}
	}
	d.errorAt(Pos{}, "invalid YAML: %s", msg)
}

// Keys of each mapping, in the order the format documents them.
const (
	planKeys      = "name, description, sample_interval, result_interval, stop_grace, components, matrix, repeat, profiles, compare, export, output"
	componentKeys = "name, group, run, attach, observe, prometheus, metrics, metric_names, metrics_preset, data_dirs"
	runKeys       = "command, args, env, dir, ready, stop_grace"
	readyKeys     = "http, tcp, timeout"
	attachKeys    = "pid, pid_file, process, cgroup"
	profileKeys   = "name, duration, warmup, workloads, slo"
	workloadKeys  = "name, driver, model, rate, concurrency, start_rate, start_concurrency, " +
		"stages, vus, backlog, dispatch_quantum, grace, params, slo"
	stageKeys = "duration, target"
	vusKeys   = "min, max"
)

// plan decodes the root mapping.
func (d *decoder) plan(n *yaml.Node, file, dir string) *Plan {
	p := newPlan(file, dir)
	m := d.fields(n, "plan", p.at, planKeys)
	d.field(m, p.at, "name", func(n *yaml.Node) (err error) { p.Name, err = scalar("name", n); return })
	d.field(m, p.at, "description", func(n *yaml.Node) (err error) { p.Description, err = scalar("description", n); return })
	d.field(m, p.at, "sample_interval", func(n *yaml.Node) (err error) {
		p.SampleInterval, err = durationOf("sample_interval", n)
		return
	})
	d.field(m, p.at, "result_interval", func(n *yaml.Node) (err error) {
		p.ResultInterval, err = durationOf("result_interval", n)
		return
	})
	d.field(m, p.at, "stop_grace", func(n *yaml.Node) (err error) { p.StopGrace, err = durationOf("stop_grace", n); return })
	d.field(m, p.at, "matrix", func(n *yaml.Node) error { p.Matrix = d.matrix(n); return nil })
	d.field(m, p.at, "repeat", func(n *yaml.Node) (err error) {
		if p.Repeat, err = intOf("repeat", n); err == nil && p.Repeat < 1 {
			err = fmt.Errorf("repeat %d: want 1 or more (1 runs every cell once)", p.Repeat)
		}
		return
	})
	d.field(m, p.at, "components", func(n *yaml.Node) error {
		return d.list("components", n, func(item *yaml.Node) { p.Components = append(p.Components, d.component(item, p)) })
	})
	d.field(m, p.at, "profiles", func(n *yaml.Node) error {
		return d.list("profiles", n, func(item *yaml.Node) { p.Profiles = append(p.Profiles, d.profile(item)) })
	})
	d.field(m, p.at, "compare", func(n *yaml.Node) error { p.Compare = d.pairs(n); return nil })
	d.field(m, p.at, "export", func(n *yaml.Node) (err error) { p.Export, err = d.exports(n); return })
	d.field(m, p.at, "output", func(n *yaml.Node) (err error) { p.Output, err = d.output(n); return })
	p.env = d.env
	return p
}

// list calls fn on each item of a sequence.
func (d *decoder) list(key string, n *yaml.Node, fn func(*yaml.Node)) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: want a list, got %s", key, kindName(n))
	}
	for _, item := range n.Content {
		if item = d.node(item); item == nil {
			break
		}
		fn(item)
	}
	return nil
}

// matrix decodes the ordered mapping of variables to value lists.
func (d *decoder) matrix(n *yaml.Node) []Variable {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "matrix: want a mapping of variable names to lists of values, got %s", kindName(n))
		return nil
	}
	var vars []Variable
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := d.node(n.Content[i]), d.node(n.Content[i+1])
		if k == nil || v == nil {
			break
		}
		name, ok := d.key(k, "matrix", seen, "")
		if !ok {
			continue
		}
		vr := Variable{Name: name, at: where{"": posOf(k), "values": posOf(v)}}
		if v.Kind != yaml.SequenceNode {
			d.errorf(v, "matrix variable %s: want a list of values, got %s", name, kindName(v))
			vr.at["values!"] = posOf(v)
		}
		for j, item := range v.Content {
			if item = d.node(item); item == nil {
				break
			}
			vr.at["values."+strconv.Itoa(j)] = posOf(item)
			s, err := scalar("matrix variable "+name, item)
			if err != nil {
				d.errorf(item, "%v", err)
			}
			vr.Values = append(vr.Values, s)
		}
		vars = append(vars, vr)
	}
	return vars
}
