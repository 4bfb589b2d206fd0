package plan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perflab/perflab/internal/observe"
)

// How a component is observed.
const (
	ObserveLocal      = "local"      // its process tree, cgroup, /metrics and disk on this machine
	ObservePrometheus = "prometheus" // range queries to a Prometheus-compatible API after each phase
)

// Prometheus says where a component's resources are read from and how: a
// preset that writes the PromQL from a few selectors, or Queries, or both
// (a query replaces the preset's of the same metric). Every string is a
// template; the bearer token and password must come from the environment.
type Prometheus struct {
	URL         string // base URL of the API, without /api/v1
	BearerToken string
	Username    string // basic auth
	Password    string
	Step        time.Duration // 0: the scrape interval read from Prometheus, else 15s
	RateWindow  time.Duration // 0: max(step + scrape interval, 4 × scrape interval)
	Preset      string        // kubernetes, process-exporter, node-exporter, self; "" for Queries only
	Namespace   string        // kubernetes
	Pod         string        // kubernetes: regex; a capture group splits the component
	Container   string        // kubernetes
	GroupName   string        // process-exporter: regex
	Instance    string        // node-exporter, self: regex
	Job         string        // process-exporter, node-exporter, self
	Queries     []Query       // explicit PromQL, one per metric
	SplitLabel  string        // with Queries and no preset: the label that names components
	SplitRegex  string        // its regex; a capture group splits
	at          where
}

// Query is one explicit PromQL expression and the metric it gives.
type Query struct {
	Metric string // a metric name of internal/observe, or metric:<name>
	Expr   string
}

// PresetSelectors maps each preset to its selector keys, the required ones
// first; the count says how many are required.
var PresetSelectors = map[string]struct {
	Keys     []string
	Required int
}{
	"kubernetes":       {[]string{"namespace", "pod", "container"}, 2},
	"process-exporter": {[]string{"groupname", "job"}, 1},
	"node-exporter":    {[]string{"instance", "job"}, 1},
	"self":             {[]string{"instance", "job"}, 1},
}

const (
	prometheusKeys = "url, bearer_token, basic_auth, step, rate_window, preset, namespace, pod, container, " +
		"groupname, instance, job, queries, split"
	basicAuthKeys = "username, password"
	splitKeys     = "label, regex"
)

// prometheus decodes a component's prometheus section.
func (d *decoder) prometheus(n *yaml.Node) *Prometheus {
	p := &Prometheus{at: where{}}
	m := d.fields(n, "prometheus", p.at, prometheusKeys)
	for key, dst := range p.texts() {
		d.field(m, p.at, key, func(n *yaml.Node) (err error) { *dst, err = d.text(key, n); return })
	}
	d.field(m, p.at, "step", func(n *yaml.Node) (err error) { p.Step, err = durationOf("step", n); return })
	d.field(m, p.at, "rate_window", func(n *yaml.Node) (err error) { p.RateWindow, err = durationOf("rate_window", n); return })
	d.field(m, p.at, "preset", func(n *yaml.Node) (err error) { p.Preset, err = scalar("preset", n); return })
	d.field(m, p.at, "basic_auth", func(n *yaml.Node) error {
		at := where{}
		bm := d.fields(n, "basic_auth", at, basicAuthKeys)
		d.field(bm, at, "username", func(n *yaml.Node) (err error) { p.Username, err = d.text("username", n); return })
		d.field(bm, at, "password", func(n *yaml.Node) (err error) { p.Password, err = d.text("password", n); return })
		for k, pos := range at {
			p.at[strings.TrimSuffix("basic_auth."+k, ".")] = pos
		}
		return nil
	})
	d.field(m, p.at, "queries", func(n *yaml.Node) (err error) { p.Queries, err = d.queries(n, p.at); return })
	d.field(m, p.at, "split", func(n *yaml.Node) error {
		at := where{}
		sm := d.fields(n, "split", at, splitKeys)
		d.field(sm, at, "label", func(n *yaml.Node) (err error) { p.SplitLabel, err = scalar("label", n); return })
		d.field(sm, at, "regex", func(n *yaml.Node) (err error) { p.SplitRegex, err = d.text("regex", n); return })
		for k, pos := range at {
			p.at[strings.TrimSuffix("split."+k, ".")] = pos
		}
		return nil
	})
	return p
}

// texts are the plain template fields of a prometheus section by key.
func (p *Prometheus) texts() map[string]*string {
	return map[string]*string{"url": &p.URL, "bearer_token": &p.BearerToken, "namespace": &p.Namespace,
		"pod": &p.Pod, "container": &p.Container, "groupname": &p.GroupName, "instance": &p.Instance, "job": &p.Job}
}

// queries decodes the queries mapping (metric → PromQL), keeping its order.
func (d *decoder) queries(n *yaml.Node, at where) ([]Query, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("queries: want a mapping of metric names to PromQL, got %s", kindName(n))
	}
	var qs []Query
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := d.node(n.Content[i]), d.node(n.Content[i+1])
		if k == nil || v == nil {
			break
		}
		name, ok := d.key(k, "queries", seen, "")
		if !ok {
			continue
		}
		key := "queries." + name
		at[key] = posOf(v)
		expr, err := d.text(key, v)
		if err != nil {
			d.errorf(v, "%v", err)
			at[key+"!"] = posOf(v)
		}
		qs = append(qs, Query{Metric: name, Expr: expr})
	}
	return qs, nil
}

// observation checks how component c is observed.
func (v *validator) observation(c *Component) {
	switch c.Observe {
	case "", ObserveLocal:
		if c.Prometheus != nil {
			v.at(c.at, "prometheus", "%s has a prometheus section but is observed locally; add observe: prometheus", label("component", c.Name))
		}
		return
	case ObservePrometheus:
	default:
		v.at(c.at, "observe", "observe %q: want %s or %s", c.Observe, ObserveLocal, ObservePrometheus)
		return
	}
	if c.Metrics != "" || len(c.MetricNames) > 0 || len(c.DataDirs) > 0 {
		v.at(c.at, "metrics", "%s is observed through prometheus: metrics, metric_names and data_dirs are local observations; use prometheus.queries",
			label("component", c.Name))
	}
	if c.Prometheus == nil {
		v.at(c.at, "observe", "%s needs a prometheus section (url and a preset or queries)", label("component", c.Name))
		return
	}
	v.prometheus(c.Prometheus)
	if c.Run != nil || c.Attach != nil {
		v.oneProcess(c)
	}
}

// oneProcess refuses a capture group in the regex of a component perflab
// starts or attaches to: it is one process, not several components.
func (v *validator) oneProcess(c *Component) {
	p := c.Prometheus
	for key, re := range map[string]string{"pod": p.Pod, "groupname": p.GroupName, "instance": p.Instance, "split.regex": p.SplitRegex} {
		if r, err := regexp.Compile(re); err == nil && !hasRefs(re) && r.NumSubexp() > 0 {
			v.at(p.at, key, "%s %q has a capture group, which splits a component in several; %s is one process that perflab %s: use (?:…)",
				key, re, label("component", c.Name), map[bool]string{true: "starts", false: "attaches to"}[c.Run != nil])
		}
	}
}

// prometheus checks a prometheus section.
func (v *validator) prometheus(p *Prometheus) {
	if p.URL == "" {
		v.at(p.at, "url", "prometheus needs a url")
	} else if v.tmpl(p.at, "url", p.URL) {
		v.url(p.at, "url", p.URL)
	}
	for key, s := range map[string]string{"bearer_token": p.BearerToken, "basic_auth.password": p.Password} {
		if s != "" && v.tmpl(p.at, key, s) && !hasEnvRef(s) {
			v.at(p.at, key, "%s: write the secret as ${VAR} and export VAR: secrets come from the environment, never the plan", key)
		}
	}
	if p.BearerToken != "" && (p.Username != "" || p.Password != "") {
		v.at(p.at, "basic_auth", "prometheus has both bearer_token and basic_auth; give one")
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"step", p.Step}, {"rate_window", p.RateWindow}} {
		if p.at.has(d.key) && d.d <= 0 {
			v.at(p.at, d.key, "%s %v must be > 0", d.key, d.d)
		}
	}
	v.preset(p)
	v.promQueries(p)
}

func hasEnvRef(s string) bool {
	rs, _ := refs(s)
	for _, r := range rs {
		if r.env {
			return true
		}
	}
	return false
}

// preset checks the preset's name and selectors.
func (v *validator) preset(p *Prometheus) {
	texts := p.texts()
	sel, ok := PresetSelectors[p.Preset]
	if p.Preset != "" && !ok {
		v.at(p.at, "preset", "preset %q: want one of %s", p.Preset, strings.Join(presetNames(), ", "))
		return
	}
	for _, key := range []string{"namespace", "pod", "container", "groupname", "instance", "job"} {
		i := slices.Index(sel.Keys, key)
		switch {
		case *texts[key] == "" && i >= 0 && i < sel.Required:
			v.at(p.at, "preset", "preset %s needs %s", p.Preset, key)
		case *texts[key] != "" && i < 0:
			v.at(p.at, key, "%s is not a selector of %s; %s", key, presetText(p.Preset), presetUse(key))
		case *texts[key] != "" && v.tmpl(p.at, key, *texts[key]) && (key == "pod" || key == "groupname" || key == "instance"):
			v.regex(p.at, key, *texts[key])
		}
	}
}

func presetText(name string) string {
	if name == "" {
		return "queries without a preset"
	}
	return "preset " + name
}

// presetUse says which presets read a selector key.
func presetUse(key string) string {
	var ps []string
	for _, name := range presetNames() {
		if slices.Contains(PresetSelectors[name].Keys, key) {
			ps = append(ps, name)
		}
	}
	return "it is for " + strings.Join(ps, ", ")
}

func presetNames() []string {
	names := make([]string, 0, len(PresetSelectors))
	for n := range PresetSelectors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// regex checks a regular expression without references.
func (v *validator) regex(w where, key, s string) {
	if hasRefs(s) {
		return
	}
	if _, err := regexp.Compile(s); err != nil {
		v.at(w, key, "%s %q: not a regular expression: %v", key, s, err)
	}
}

// promQueries checks the explicit queries and the split.
func (v *validator) promQueries(p *Prometheus) {
	if p.Preset == "" && len(p.Queries) == 0 {
		v.at(p.at, "preset", "prometheus needs a preset or queries")
	}
	for _, q := range p.Queries {
		key := "queries." + q.Metric
		if !knownMetric(q.Metric) {
			v.at(p.at, key, "queries: %q is not a metric perflab knows; want one of %s, or metric:<name>", q.Metric, strings.Join(queryMetrics, ", "))
		}
		if strings.TrimSpace(q.Expr) == "" {
			v.at(p.at, key, "%s: empty PromQL", key)
		}
		v.tmpl(p.at, key, q.Expr)
	}
	switch {
	case p.SplitLabel == "" && p.SplitRegex == "":
	case p.Preset != "":
		v.at(p.at, "split", "split is for queries without a preset; preset %s splits by its own selector", p.Preset)
	case p.SplitLabel == "" || p.SplitRegex == "":
		v.at(p.at, "split", "split needs a label and a regex")
	case v.tmpl(p.at, "split.regex", p.SplitRegex):
		v.regex(p.at, "split.regex", p.SplitRegex)
	}
}

// queryMetrics are the metric names an explicit query may give.
var queryMetrics = []string{observe.CPUCores, observe.RSSBytes, observe.Threads, observe.OpenFDs, observe.ReadBytesPerS,
	observe.WriteBytesPerS, observe.Processes, observe.CgroupMemoryBytes, observe.CgroupCPUCores, observe.GoHeapInuseBytes,
	observe.GCPerMin, observe.ProcessCPUCores, observe.ProcessRSSBytes, observe.GoGoroutines, observe.WorkingSetBytes,
	observe.MemoryUsedBytes, observe.Restarts, observe.OOMKilled, observe.DiskBytes}

func knownMetric(m string) bool {
	return slices.Contains(queryMetrics, m) || strings.HasPrefix(m, observe.MetricPrefix) && len(m) > len(observe.MetricPrefix)
}

// prometheus returns p with its templates substituted.
func (x *expander) prometheus(p *Prometheus) *Prometheus {
	out := *p
	for key, dst := range out.texts() {
		*dst = x.str(p.at, key, *dst)
	}
	out.Username = x.str(p.at, "basic_auth.username", p.Username)
	out.Password = x.str(p.at, "basic_auth.password", p.Password)
	out.SplitRegex = x.str(p.at, "split.regex", p.SplitRegex)
	out.Queries = slices.Clone(p.Queries)
	for i, q := range out.Queries {
		out.Queries[i].Expr = x.str(p.at, "queries."+q.Metric, q.Expr)
	}
	return &out
}

// promJSON is a prometheus section as Describe writes it: references
// unexpanded, so no secret.
type promJSON struct {
	URL         string          `json:"url"`
	BearerToken string          `json:"bearer_token,omitempty"`
	BasicAuth   *basicAuthJSON  `json:"basic_auth,omitempty"`
	Step        string          `json:"step,omitempty"`
	RateWindow  string          `json:"rate_window,omitempty"`
	Preset      string          `json:"preset,omitempty"`
	Namespace   string          `json:"namespace,omitempty"`
	Pod         string          `json:"pod,omitempty"`
	Container   string          `json:"container,omitempty"`
	GroupName   string          `json:"groupname,omitempty"`
	Instance    string          `json:"instance,omitempty"`
	Job         string          `json:"job,omitempty"`
	Queries     json.RawMessage `json:"queries,omitempty"`
	Split       *splitJSON      `json:"split,omitempty"`
}

type basicAuthJSON struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

type splitJSON struct {
	Label string `json:"label"`
	Regex string `json:"regex"`
}

func describePrometheus(p *Prometheus) *promJSON {
	if p == nil {
		return nil
	}
	pj := &promJSON{URL: p.URL, BearerToken: p.BearerToken, Step: optDur(p.Step), RateWindow: optDur(p.RateWindow),
		Preset: p.Preset, Namespace: p.Namespace, Pod: p.Pod, Container: p.Container, GroupName: p.GroupName,
		Instance: p.Instance, Job: p.Job}
	if p.Username != "" || p.Password != "" {
		pj.BasicAuth = &basicAuthJSON{Username: p.Username, Password: p.Password}
	}
	if p.SplitLabel != "" || p.SplitRegex != "" {
		pj.Split = &splitJSON{Label: p.SplitLabel, Regex: p.SplitRegex}
	}
	if len(p.Queries) > 0 {
		pj.Queries = orderedObject(len(p.Queries), func(i int) (string, any) { return p.Queries[i].Metric, p.Queries[i].Expr })
	}
	return pj
}
