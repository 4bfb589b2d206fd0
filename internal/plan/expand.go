package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Builtins are the values of the built-in variables, which the caller knows
// and the plan does not.
type Builtins struct {
	Perflab string // {{perflab}}: path of the running perflab binary
	RunDir  string // {{run_dir}}: the run directory
	Cell    string // {{cell}}: defaults to the cell's name
}

// Instance is a plan made concrete for one cell: every {{name}} and ${NAME}
// substituted, every relative path made absolute against Plan.Dir. It holds
// the values of environment variables: run it, never store or print it.
type Instance struct {
	Cell       Cell
	Components []Component // Run.Dir is always set; relative commands with a / are resolved
	Profiles   []Profile   // Params.Decode substitutes references
}

// Expand returns the concrete components and profiles of p for cell c, one
// of p.Cells() or p.RunCells(n). A built-in that a template uses but b leaves empty is an
// error, as is a cell that does not fit p's matrix.
func (p *Plan) Expand(c Cell, b Builtins) (*Instance, error) {
	vars, err := p.cellVars(c, b)
	if err != nil {
		return nil, err
	}
	x := &expander{file: p.File, dir: p.Dir, vars: vars, env: p.env}
	inst := &Instance{Cell: c}
	for _, comp := range p.Components {
		inst.Components = append(inst.Components, x.component(comp))
	}
	for _, pr := range p.Profiles {
		pr.Workloads = slices.Clone(pr.Workloads)
		for i := range pr.Workloads {
			w := &pr.Workloads[i]
			w.Stages = slices.Clone(w.Stages)
			w.Params.vars, w.Params.env = vars, p.env
			if w.Params.node != nil {
				_, errs := w.Params.expanded() // report empty built-ins now, not at Decode
				x.errs = append(x.errs, errs...)
			}
		}
		inst.Profiles = append(inst.Profiles, pr)
	}
	if len(x.errs) > 0 {
		return nil, x.errs.sorted()
	}
	return inst, nil
}

// cellVars maps every variable name to its value in cell c.
func (p *Plan) cellVars(c Cell, b Builtins) (map[string]string, error) {
	if len(c.Vars) != len(p.Matrix) {
		return nil, fmt.Errorf("cannot expand cell %q: the plan's matrix has %d variables", c.Name, len(p.Matrix))
	}
	vars := map[string]string{BuiltinPerflab: b.Perflab, BuiltinRunDir: b.RunDir, BuiltinCell: b.Cell,
		BuiltinRepetition: strconv.Itoa(max(c.Repetition, 1))}
	if b.Cell == "" {
		vars[BuiltinCell] = c.Name
	}
	for i, v := range c.Vars {
		if v.Name != p.Matrix[i].Name {
			return nil, fmt.Errorf("cannot expand cell %q: variable %d is %s, not %s", c.Name, i+1, v.Name, p.Matrix[i].Name)
		}
		vars[v.Name] = v.Value
	}
	return vars, nil
}

// expander substitutes the references of one cell.
type expander struct {
	file string
	dir  string
	vars map[string]string
	env  *envValues
	errs Errors
}

// str substitutes the references in s, the field key of a value at w.
func (x *expander) str(w where, key, s string) string {
	p := w.pos(key)
	fail := func(format string, a ...any) {
		x.errs = append(x.errs, Error{File: x.file, Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, a...)})
	}
	out, err := substitute(s, func(r ref) string {
		if r.env {
			v, ok := x.env.lookup(r.name)
			if !ok {
				fail("%s: environment variable %s was not read when the plan was loaded", key, r.name)
			}
			return v
		}
		v, ok := x.vars[r.name]
		switch {
		case !ok:
			fail("%s: undefined variable %s", key, r)
		case v == "" && isBuiltin(r.name):
			fail("%s: built-in %s has no value here", key, r)
		}
		return v
	})
	if err != nil {
		fail("%s: %v", key, err)
	}
	return out
}

// path substitutes s and makes it absolute against the plan's directory.
func (x *expander) path(w where, key, s string) string {
	s = x.str(w, key, s)
	if s == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(x.dir, s)
}

func (x *expander) strs(w where, key string, list []string, path bool) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		k := fmt.Sprintf("%s.%d", key, i)
		if path {
			out[i] = x.path(w, k, s)
		} else {
			out[i] = x.str(w, k, s)
		}
	}
	return out
}

// component returns c with its templates substituted.
func (x *expander) component(c Component) Component {
	c.Metrics = x.str(c.at, "metrics", c.Metrics)
	c.MetricNames = slices.Clone(c.MetricNames)
	c.DataDirs = x.strs(c.at, "data_dirs", c.DataDirs, true)
	if c.Run != nil {
		r := *c.Run
		r.Command = x.str(r.at, "command", r.Command)
		if strings.ContainsRune(r.Command, filepath.Separator) && !filepath.IsAbs(r.Command) {
			r.Command = filepath.Join(x.dir, r.Command)
		}
		r.Args = x.strs(r.at, "args", r.Args, false)
		r.Env = slices.Clone(r.Env)
		for i, e := range r.Env {
			r.Env[i].Value = x.str(r.at, "env."+e.Name, e.Value)
		}
		r.Dir = x.path(r.at, "dir", r.Dir)
		if r.Dir == "" {
			r.Dir = x.dir
		}
		if r.Ready != nil {
			rd := *r.Ready
			rd.HTTP, rd.TCP = x.str(rd.at, "http", rd.HTTP), x.str(rd.at, "tcp", rd.TCP)
			r.Ready = &rd
		}
		c.Run = &r
	}
	if c.Prometheus != nil {
		c.Prometheus = x.prometheus(c.Prometheus)
	}
	if c.Attach != nil {
		a := *c.Attach
		a.PIDFile = x.path(a.at, "pid_file", a.PIDFile)
		a.Process = x.str(a.at, "process", a.Process)
		a.Cgroup = x.str(a.at, "cgroup", a.Cgroup)
		c.Attach = &a
	}
	return c
}
