package plan

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/observe"
)

// Validate lists every problem with p. Each is an Error, with the position
// of the offending value when p was decoded from a file. Environment
// variables are checked when the plan is parsed, not here.
func (p *Plan) Validate() []error {
	v := &validator{file: p.File, vars: map[string]bool{}, implicit: p.Implicit}
	for _, vr := range p.Matrix {
		v.vars[vr.Name] = true
		v.varList = append(v.varList, vr.Name)
	}
	if strings.TrimSpace(p.Name) == "" {
		v.at(p.at, "name", "the plan needs a name")
	}
	if p.SampleInterval <= 0 {
		v.at(p.at, "sample_interval", "sample_interval %v must be > 0", p.SampleInterval)
	}
	if p.ResultInterval != 0 && (p.ResultInterval < MinResultInterval || p.ResultInterval > MaxResultInterval) {
		v.at(p.at, "result_interval", "result_interval %v: want %v to %v", p.ResultInterval, MinResultInterval, MaxResultInterval)
	}
	if p.StopGrace < 0 {
		v.at(p.at, "stop_grace", "stop_grace %v must be >= 0", p.StopGrace)
	}
	v.matrix(p)
	v.repeat(p)
	if p.Implicit && (len(p.Profiles) != 1 || len(p.Matrix) > 0 || p.Repeat > 1) {
		v.at(p.at, "", "an implicit plan has one profile, no matrix and no repetitions")
	}
	names := map[string]Pos{}
	for i := range p.Components {
		c := &p.Components[i]
		v.unique(names, c.Name, c.at, "component")
		v.component(c)
	}
	if len(p.Profiles) == 0 {
		v.at(p.at, "profiles", "the plan needs at least one profile")
	}
	names = map[string]Pos{}
	for i := range p.Profiles {
		pr := &p.Profiles[i]
		v.unique(names, pr.Name, pr.at, "profile")
		v.profile(pr)
	}
	v.pairs(p)
	for i := range p.Export {
		v.export(&p.Export[i])
	}
	return v.errs
}

// validator collects the problems Validate finds.
type validator struct {
	file     string
	vars     map[string]bool // matrix variables
	varList  []string
	implicit bool // Plan.Implicit: its one workload needs no naming
	errs     []error
}

// at records a problem with the field key of a value, unless that field
// already failed to decode.
func (v *validator) at(w where, key, format string, a ...any) {
	if w.bad(key) {
		return
	}
	p := w.pos(key)
	v.errs = append(v.errs, Error{File: v.file, Line: p.Line, Col: p.Col, Flag: p.Flag, Msg: fmt.Sprintf(format, a...)})
}

// name checks a component, profile or workload name.
func (v *validator) name(w where, kind, name string) {
	switch {
	case name == "":
		v.at(w, "name", "%s needs a name", kind)
	case !validName(name):
		v.at(w, "name", "%s name %q: use lowercase letters, digits, _ and -", kind, name)
	}
}

// label names a thing in a message: `profile "small"`, or just `profile`
// when it has no name.
func label(kind, name string) string {
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}

func validName(s string) bool {
	for _, c := range s {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}

// unique reports a name seen before.
func (v *validator) unique(seen map[string]Pos, name string, w where, kind string) {
	if name == "" {
		return
	}
	if first, dup := seen[name]; dup {
		v.at(w, "name", "%s %q is defined twice (first on line %d)", kind, name, first.Line)
		return
	}
	seen[name] = w.pos("name")
}

// matrix checks the variables and the size of their product.
func (v *validator) matrix(p *Plan) {
	seen := map[string]Pos{}
	cells := 1
	for _, vr := range p.Matrix {
		switch {
		case !isIdent(vr.Name):
			v.at(vr.at, "", "matrix variable %q: use letters, digits and _, so that {{%s}} can name it", vr.Name, vr.Name)
		case isBuiltin(vr.Name):
			v.at(vr.at, "", "matrix variable %q is a built-in; choose another name", vr.Name)
		}
		if first, dup := seen[vr.Name]; dup {
			v.at(vr.at, "", "matrix variable %q is defined twice (first on line %d)", vr.Name, first.Line)
		}
		seen[vr.Name] = vr.at.pos("")
		if len(vr.Values) == 0 {
			v.at(vr.at, "values", "matrix variable %s has no values", vr.Name)
		}
		values := map[string]bool{}
		for j, val := range vr.Values {
			if values[val] {
				v.at(vr.at, "values."+strconv.Itoa(j), "matrix variable %s lists %q twice", vr.Name, val)
			}
			values[val] = true
		}
		if len(values) > 0 && cells <= MaxCells {
			cells *= len(values)
		}
	}
	if cells > MaxCells {
		v.at(p.at, "matrix", "the matrix has more than %d cells; split the plan", MaxCells)
	}
}

// repeat checks the number of repetitions, alone and with the matrix. A
// plan built in code may leave it 0: once, as 1.
func (v *validator) repeat(p *Plan) {
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		v.at(p.at, "repeat", "repeat %d: want 1 (every cell once) to %d", p.Repeat, MaxRepeat)
		return
	}
	// equivalent mutants: cells >= 0 (0 cells times any repeat is not over
	// MaxCells), Repeat >= 1 (Cells never holds more than MaxCells).
	if cells := len(p.Cells()); cells > 0 && p.Repeat > 1 && cells*p.Repeat > MaxCells {
		v.at(p.at, "repeat", "%d cells × repeat %d is more than %d cells; split the plan", cells, p.Repeat, MaxCells)
	}
}

// component checks one component.
func (v *validator) component(c *Component) {
	v.name(c.at, "component", c.Name)
	switch {
	case c.Run == nil && c.Attach == nil && c.Observe != ObservePrometheus:
		v.at(c.at, "", "%s needs run (to start it), attach (to find it running) or observe: prometheus (to read it from Prometheus)",
			label("component", c.Name))
	case c.Run != nil && c.Attach != nil:
		v.at(c.at, "attach", "%s has both run and attach; give one", label("component", c.Name))
	}
	if c.Run != nil {
		v.run(c.Run)
	}
	if c.Attach != nil {
		v.attach(c.Attach)
	}
	v.observation(c)
	if v.tmpl(c.at, "metrics", c.Metrics) {
		v.url(c.at, "metrics", c.Metrics)
	}
	for i, s := range c.MetricNames {
		if s == "" {
			v.at(c.at, "metric_names."+strconv.Itoa(i), "metric_names: empty name")
		}
	}
	for i, s := range c.DataDirs {
		v.path(c.at, "data_dirs."+strconv.Itoa(i), s)
	}
	if _, ok := observe.ServingEngines[c.MetricsPreset]; c.MetricsPreset != "" && !ok {
		v.at(c.at, "metrics_preset", "metrics_preset %q is unknown (want one of %s)", c.MetricsPreset, strings.Join(observe.ServingEngineNames(), ", "))
	}
	if c.MetricsPreset != "" && c.Metrics == "" {
		v.at(c.at, "metrics_preset", "metrics_preset %s reads the component's /metrics: give metrics too", c.MetricsPreset)
	}
}

// run checks how a component is started.
func (v *validator) run(r *Run) {
	if r.Command == "" {
		v.at(r.at, "command", "run needs a command")
	}
	v.tmpl(r.at, "command", r.Command)
	for i, s := range r.Args {
		v.tmpl(r.at, "args."+strconv.Itoa(i), s)
	}
	seen := map[string]bool{}
	for _, e := range r.Env {
		key := "env." + e.Name
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			v.at(r.at, key, "env: invalid variable name %q", e.Name)
		}
		if seen[e.Name] {
			v.at(r.at, key, "env: %s is set twice", e.Name)
		}
		seen[e.Name] = true
		v.tmpl(r.at, key, e.Value)
	}
	v.path(r.at, "dir", r.Dir)
	if r.StopGrace < 0 {
		v.at(r.at, "stop_grace", "stop_grace %v must be >= 0", r.StopGrace)
	}
	if r.Ready != nil {
		v.ready(r.Ready)
	}
}

// ready checks a readiness probe.
func (v *validator) ready(r *Ready) {
	switch {
	case r.HTTP == "" && r.TCP == "":
		v.at(r.at, "", "ready needs http (a URL) or tcp (host:port)")
	case r.HTTP != "" && r.TCP != "":
		v.at(r.at, "tcp", "ready takes http or tcp, not both")
	}
	if r.HTTP != "" && v.tmpl(r.at, "http", r.HTTP) {
		v.url(r.at, "http", r.HTTP)
	}
	if r.TCP != "" && v.tmpl(r.at, "tcp", r.TCP) && !hasRefs(r.TCP) {
		if _, _, err := net.SplitHostPort(r.TCP); err != nil {
			v.at(r.at, "tcp", "ready tcp %q: want host:port", r.TCP)
		}
	}
	if r.Timeout <= 0 {
		v.at(r.at, "timeout", "ready timeout %v must be > 0", r.Timeout)
	}
}

// attach checks that exactly one way of finding the process is given.
func (v *validator) attach(a *Attach) {
	var given []string
	for _, f := range []struct {
		key string
		set bool
	}{{"pid", a.PID != 0}, {"pid_file", a.PIDFile != ""}, {"process", a.Process != ""}, {"cgroup", a.Cgroup != ""}} {
		if f.set || a.at.has(f.key) {
			given = append(given, f.key)
		}
	}
	switch {
	case len(given) == 0:
		v.at(a.at, "", "attach needs one of pid, pid_file, process or cgroup")
	case len(given) > 1:
		v.at(a.at, given[1], "attach takes one of pid, pid_file, process or cgroup; got %s", strings.Join(given, " and "))
	}
	if a.at.has("pid") && a.PID <= 0 {
		v.at(a.at, "pid", "pid %d must be > 0", a.PID)
	}
	v.path(a.at, "pid_file", a.PIDFile)
	v.tmpl(a.at, "process", a.Process)
	v.path(a.at, "cgroup", a.Cgroup)
}

// path checks a template that names a file or directory.
func (v *validator) path(w where, key, s string) {
	if v.tmpl(w, key, s) && strings.ContainsRune(s, 0) {
		v.at(w, key, "%s: a path cannot hold a NUL byte", key)
	}
}

// url checks an http(s) URL that has no references.
func (v *validator) url(w where, key, s string) {
	if s == "" || hasRefs(s) {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.at(w, key, "%s %q: want an http:// or https:// URL", key, s)
	}
}

func hasRefs(s string) bool {
	rs, err := refs(s)
	return err != nil || len(rs) > 0
}

// tmpl checks a template's syntax and that each {{name}} is a matrix
// variable or a built-in. It reports whether the template is sound.
func (v *validator) tmpl(w where, key, s string) bool {
	rs, err := refs(s)
	if err != nil {
		v.at(w, key, "%s: %v", key, err)
		return false
	}
	ok := true
	for _, r := range rs {
		if !r.env && !v.vars[r.name] && !isBuiltin(r.name) {
			v.at(w, key, "%s: undefined variable %s; %s", key, r, v.defined())
			ok = false
		}
	}
	return ok
}

// defined says which variables exist, for the undefined-variable message.
func (v *validator) defined() string {
	if len(v.varList) == 0 {
		return "the plan has no matrix; built-ins are " + builtinList
	}
	return "the matrix defines " + strings.Join(v.varList, ", ") + "; built-ins are " + builtinList
}
