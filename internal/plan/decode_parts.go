package plan

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// component decodes one item of components.
func (d *decoder) component(n *yaml.Node, p *Plan) Component {
	c := Component{at: where{}}
	m := d.fields(n, "component", c.at, componentKeys)
	d.field(m, c.at, "name", func(n *yaml.Node) (err error) { c.Name, err = scalar("name", n); return })
	d.field(m, c.at, "group", func(n *yaml.Node) (err error) { c.Group, err = scalar("group", n); return })
	d.field(m, c.at, "run", func(n *yaml.Node) error { c.Run = d.run(n, p); return nil })
	d.field(m, c.at, "attach", func(n *yaml.Node) error { c.Attach = d.attach(n); return nil })
	d.field(m, c.at, "observe", func(n *yaml.Node) (err error) { c.Observe, err = scalar("observe", n); return })
	d.field(m, c.at, "prometheus", func(n *yaml.Node) error { c.Prometheus = d.prometheus(n); return nil })
	d.field(m, c.at, "metrics", func(n *yaml.Node) (err error) { c.Metrics, err = d.text("metrics", n); return })
	d.field(m, c.at, "metric_names", func(n *yaml.Node) (err error) {
		c.MetricNames, err = d.texts("metric_names", n, c.at, false)
		return
	})
	d.field(m, c.at, "metrics_preset", func(n *yaml.Node) (err error) {
		c.MetricsPreset, err = scalar("metrics_preset", n)
		return
	})
	d.field(m, c.at, "data_dirs", func(n *yaml.Node) (err error) {
		c.DataDirs, err = d.texts("data_dirs", n, c.at, true)
		return
	})
	return c
}

// run decodes a component's run section.
func (d *decoder) run(n *yaml.Node, p *Plan) *Run {
	r := newRun(p)
	m := d.fields(n, "run", r.at, runKeys)
	d.field(m, r.at, "command", func(n *yaml.Node) (err error) { r.Command, err = d.text("command", n); return })
	d.field(m, r.at, "args", func(n *yaml.Node) (err error) { r.Args, err = d.texts("args", n, r.at, true); return })
	d.field(m, r.at, "env", func(n *yaml.Node) (err error) { r.Env, err = d.envVars(n, r.at); return })
	d.field(m, r.at, "dir", func(n *yaml.Node) (err error) { r.Dir, err = d.text("dir", n); return })
	d.field(m, r.at, "ready", func(n *yaml.Node) error { r.Ready = d.ready(n); return nil })
	d.field(m, r.at, "stop_grace", func(n *yaml.Node) (err error) { r.StopGrace, err = durationOf("stop_grace", n); return })
	return r
}

// envVars decodes the env mapping, keeping its order.
func (d *decoder) envVars(n *yaml.Node, at where) ([]EnvVar, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("env: want a mapping of variable names to values, got %s", kindName(n))
	}
	var vars []EnvVar
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := d.node(n.Content[i]), d.node(n.Content[i+1])
		if k == nil || v == nil {
			break
		}
		name, ok := d.key(k, "env", seen, "")
		if !ok {
			continue
		}
		key := "env." + name
		at[key] = posOf(v)
		var value string
		if !isNull(v) {
			var err error
			if value, err = d.text(key, v); err != nil {
				d.errorf(v, "%v", err)
				at[key+"!"] = posOf(v)
			}
		}
		vars = append(vars, EnvVar{Name: name, Value: value})
	}
	return vars, nil
}

// ready decodes a readiness probe.
func (d *decoder) ready(n *yaml.Node) *Ready {
	r := newReady()
	m := d.fields(n, "ready", r.at, readyKeys)
	d.field(m, r.at, "http", func(n *yaml.Node) (err error) { r.HTTP, err = d.text("http", n); return })
	d.field(m, r.at, "tcp", func(n *yaml.Node) (err error) { r.TCP, err = d.text("tcp", n); return })
	d.field(m, r.at, "timeout", func(n *yaml.Node) (err error) { r.Timeout, err = durationOf("timeout", n); return })
	return r
}

// attach decodes a component's attach section.
func (d *decoder) attach(n *yaml.Node) *Attach {
	a := &Attach{at: where{}}
	m := d.fields(n, "attach", a.at, attachKeys)
	d.field(m, a.at, "pid", func(n *yaml.Node) (err error) { a.PID, err = intOf("pid", n); return })
	d.field(m, a.at, "pid_file", func(n *yaml.Node) (err error) { a.PIDFile, err = d.text("pid_file", n); return })
	d.field(m, a.at, "process", func(n *yaml.Node) (err error) { a.Process, err = d.text("process", n); return })
	d.field(m, a.at, "cgroup", func(n *yaml.Node) (err error) { a.Cgroup, err = d.text("cgroup", n); return })
	return a
}

// profile decodes one item of profiles.
func (d *decoder) profile(n *yaml.Node) Profile {
	p := Profile{at: where{}}
	m := d.fields(n, "profile", p.at, profileKeys)
	d.field(m, p.at, "name", func(n *yaml.Node) (err error) { p.Name, err = scalar("name", n); return })
	d.field(m, p.at, "duration", func(n *yaml.Node) (err error) { p.Duration, err = durationOf("duration", n); return })
	d.field(m, p.at, "warmup", func(n *yaml.Node) (err error) { p.Warmup, err = durationOf("warmup", n); return })
	d.field(m, p.at, "workloads", func(n *yaml.Node) error {
		return d.list("workloads", n, func(item *yaml.Node) { p.Workloads = append(p.Workloads, d.workload(item)) })
	})
	d.field(m, p.at, "slo", func(n *yaml.Node) (err error) { p.SLO, err = d.gates(n, p.at); return })
	return p
}

// workload decodes one item of a profile's workloads.
func (d *decoder) workload(n *yaml.Node) Workload {
	w := newWorkload()
	m := d.fields(n, "workload", w.at, workloadKeys)
	d.field(m, w.at, "name", func(n *yaml.Node) (err error) { w.Name, err = scalar("name", n); return })
	d.field(m, w.at, "driver", func(n *yaml.Node) (err error) { w.Driver, err = scalar("driver", n); return })
	d.field(m, w.at, "model", func(n *yaml.Node) error {
		s, err := scalar("model", n)
		w.Model = Model(s)
		return err
	})
	d.field(m, w.at, "rate", func(n *yaml.Node) (err error) { w.Rate, err = rateOf("rate", n); return })
	d.field(m, w.at, "concurrency", func(n *yaml.Node) (err error) { w.Concurrency, err = intOf("concurrency", n); return })
	d.field(m, w.at, "start_rate", func(n *yaml.Node) (err error) { w.StartRate, err = rateOf("start_rate", n); return })
	d.field(m, w.at, "start_concurrency", func(n *yaml.Node) (err error) {
		w.StartConcurrency, err = intOf("start_concurrency", n)
		return
	})
	d.field(m, w.at, "backlog", func(n *yaml.Node) (err error) { w.Backlog, err = intOf("backlog", n); return })
	d.field(m, w.at, "dispatch_quantum", func(n *yaml.Node) (err error) {
		w.DispatchQuantum, err = durationOf("dispatch_quantum", n)
		return
	})
	d.field(m, w.at, "grace", func(n *yaml.Node) (err error) { w.Grace, err = durationOf("grace", n); return })
	d.field(m, w.at, "params", func(n *yaml.Node) (err error) { w.Params, err = d.params(n); return })
	d.field(m, w.at, "slo", func(n *yaml.Node) (err error) { w.SLO, err = d.gates(n, w.at); return })
	if w.Model == "" {
		w.Model = Open
		if m["concurrency"] != nil && m["rate"] == nil || m["start_concurrency"] != nil && m["start_rate"] == nil {
			w.Model = Closed
		}
	}
	d.field(m, w.at, "stages", func(n *yaml.Node) error {
		return d.list("stages", n, func(item *yaml.Node) { w.Stages = append(w.Stages, d.stage(item, w.Model)) })
	})
	var minSet, maxSet bool
	d.field(m, w.at, "vus", func(n *yaml.Node) error { minSet, maxSet = d.vus(n, &w); return nil })
	if w.Model == Open {
		w.VUs = w.VUs.WithDefaults(minSet, maxSet)
	}
	return w
}

// vus decodes the VU pool bounds into w and says which were given.
func (d *decoder) vus(n *yaml.Node, w *Workload) (minSet, maxSet bool) {
	at := where{}
	m := d.fields(n, "vus", at, vusKeys)
	d.field(m, at, "min", func(n *yaml.Node) (err error) { w.VUs.Min, err = intOf("vus.min", n); return })
	d.field(m, at, "max", func(n *yaml.Node) (err error) { w.VUs.Max, err = intOf("vus.max", n); return })
	for k, p := range at {
		if k != "" {
			w.at["vus."+k] = p
		}
	}
	return m["min"] != nil, m["max"] != nil
}

// stage decodes one stage; its target is a rate in the open model and a
// number of VUs in the closed model.
func (d *decoder) stage(n *yaml.Node, model Model) Stage {
	s := Stage{at: where{}}
	m := d.fields(n, "stage", s.at, stageKeys)
	d.field(m, s.at, "duration", func(n *yaml.Node) (err error) { s.Duration, err = durationOf("duration", n); return })
	d.field(m, s.at, "target", func(n *yaml.Node) (err error) {
		if model == Closed {
			s.Concurrency, err = intOf("target", n)
			return err
		}
		s.Rate, err = rateOf("target", n)
		return err
	})
	return s
}

// params keeps a workload's params subtree: a copy without aliases, whose
// string values' ${NAME} references are looked up.
func (d *decoder) params(n *yaml.Node) (Params, error) {
	if n.Kind != yaml.MappingNode {
		return Params{}, fmt.Errorf("params: want a mapping, got %s", kindName(n))
	}
	return Params{node: d.copyNode(n, false), file: d.file, env: d.env}, nil
}

// copyNode deep-copies n, resolving aliases and merge keys.
func (d *decoder) copyNode(n *yaml.Node, isKey bool) *yaml.Node {
	orig := n
	if n = d.node(n); n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: orig.Line, Column: orig.Column}
	}
	c := *n
	c.Anchor, c.Alias, c.Content = "", nil, nil
	if n.Kind == yaml.ScalarNode && !isKey && n.ShortTag() == "!!str" {
		d.lookupEnv(n.Value, n)
	}
	for i, child := range n.Content {
		c.Content = append(c.Content, d.copyNode(child, n.Kind == yaml.MappingNode && i%2 == 0))
	}
	return &c
}

// texts reads a list of strings, recording item positions in at under
// key.0, key.1, ... Template strings (tmpl) have their environment
// variables looked up.
func (d *decoder) texts(key string, n *yaml.Node, at where, tmpl bool) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: want a list, got %s", key, kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		if item = d.node(item); item == nil {
			break
		}
		k := key + "." + strconv.Itoa(i)
		at[k] = posOf(item)
		s, err := scalar(k, item)
		if err != nil {
			d.errorf(item, "%v", err)
			at[k+"!"] = posOf(item)
		} else if tmpl {
			d.lookupEnv(s, item)
		}
		out = append(out, s)
	}
	return out, nil
}
