package plan

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/units"
)

// Describe returns p as JSON in the plan format itself, with defaults
// filled in and references unexpanded: safe to store with a run and to show
// in reports, and a valid plan when parsed again.
func (p *Plan) Describe() (json.RawMessage, error) {
	d := planJSON{Name: p.Name, Description: p.Description, SampleInterval: dur(p.SampleInterval),
		StopGrace: dur(p.StopGrace), Matrix: matrixJSON(p.Matrix), Compare: describePairs(p.Compare), Export: describeExports(p.Export)}
	if p.Repeat > 1 {
		d.Repeat = p.Repeat
	}
	if p.ResultInterval != 0 && p.ResultInterval != DefaultResultInterval {
		d.ResultInterval = dur(p.ResultInterval)
	}
	for _, c := range p.Components {
		d.Components = append(d.Components, describeComponent(c))
	}
	for _, pr := range p.Profiles {
		pj := profileJSON{Name: pr.Name, Duration: dur(pr.Duration), Warmup: optDur(pr.Warmup), SLO: pr.SLO}
		for _, w := range pr.Workloads {
			wj, err := describeWorkload(w)
			if err != nil {
				return nil, err
			}
			pj.Workloads = append(pj.Workloads, wj)
		}
		d.Profiles = append(d.Profiles, pj)
	}
	return json.Marshal(d)
}

// The JSON shapes of Describe; field names are the plan format's keys.
type (
	planJSON struct {
		Name           string          `json:"name"`
		Description    string          `json:"description,omitempty"`
		SampleInterval string          `json:"sample_interval"`
		ResultInterval string          `json:"result_interval,omitempty"` // only when not 1s: a plan of the default is described as before
		StopGrace      string          `json:"stop_grace"`
		Components     []componentJSON `json:"components,omitempty"`
		Matrix         json.RawMessage `json:"matrix,omitempty"`
		Repeat         int             `json:"repeat,omitempty"` // only when above 1: a plan run once is described as before
		Profiles       []profileJSON   `json:"profiles"`
		Compare        []pairJSON      `json:"compare,omitempty"`
		Export         []exportJSON    `json:"export,omitempty"`
	}
	componentJSON struct {
		Name        string      `json:"name"`
		Group       string      `json:"group,omitempty"`
		Run         *runJSON    `json:"run,omitempty"`
		Attach      *attachJSON `json:"attach,omitempty"`
		Observe     string      `json:"observe,omitempty"`
		Prometheus  *promJSON   `json:"prometheus,omitempty"`
		Metrics     string      `json:"metrics,omitempty"`
		MetricNames []string    `json:"metric_names,omitempty"`
		Preset      string      `json:"metrics_preset,omitempty"`
		DataDirs    []string    `json:"data_dirs,omitempty"`
	}
	runJSON struct {
		Command   string          `json:"command"`
		Args      []string        `json:"args,omitempty"`
		Env       json.RawMessage `json:"env,omitempty"`
		Dir       string          `json:"dir,omitempty"`
		Ready     *readyJSON      `json:"ready,omitempty"`
		StopGrace string          `json:"stop_grace"`
	}
	readyJSON struct {
		HTTP    string `json:"http,omitempty"`
		TCP     string `json:"tcp,omitempty"`
		Timeout string `json:"timeout"`
	}
	attachJSON struct {
		PID     int    `json:"pid,omitempty"`
		PIDFile string `json:"pid_file,omitempty"`
		Process string `json:"process,omitempty"`
		Cgroup  string `json:"cgroup,omitempty"`
	}
	profileJSON struct {
		Name      string         `json:"name"`
		Duration  string         `json:"duration"`
		Warmup    string         `json:"warmup,omitempty"`
		Workloads []workloadJSON `json:"workloads"`
		SLO       []string       `json:"slo,omitempty"`
	}
	workloadJSON struct {
		Name             string          `json:"name"`
		Driver           string          `json:"driver"`
		Model            Model           `json:"model"`
		Rate             string          `json:"rate,omitempty"`
		Concurrency      int             `json:"concurrency,omitempty"`
		StartRate        string          `json:"start_rate,omitempty"`
		StartConcurrency int             `json:"start_concurrency,omitempty"`
		Stages           []stageJSON     `json:"stages,omitempty"`
		VUs              *vusJSON        `json:"vus,omitempty"`
		Backlog          int             `json:"backlog,omitempty"`
		DispatchQuantum  string          `json:"dispatch_quantum,omitempty"`
		Grace            string          `json:"grace"`
		Params           json.RawMessage `json:"params,omitempty"`
		SLO              []string        `json:"slo,omitempty"`
	}
	stageJSON struct {
		Duration string `json:"duration"`
		Target   any    `json:"target"`
	}
)

type vusJSON struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

func describeComponent(c Component) componentJSON {
	cj := componentJSON{Name: c.Name, Group: c.Group, Metrics: c.Metrics, MetricNames: c.MetricNames, Preset: c.MetricsPreset, DataDirs: c.DataDirs,
		Observe: c.Observe, Prometheus: describePrometheus(c.Prometheus)}
	if r := c.Run; r != nil {
		rj := &runJSON{Command: r.Command, Args: r.Args, Dir: r.Dir, StopGrace: dur(r.StopGrace)}
		if len(r.Env) > 0 {
			rj.Env = orderedObject(len(r.Env), func(i int) (string, any) { return r.Env[i].Name, r.Env[i].Value })
		}
		if r.Ready != nil {
			rj.Ready = &readyJSON{HTTP: r.Ready.HTTP, TCP: r.Ready.TCP, Timeout: dur(r.Ready.Timeout)}
		}
		cj.Run = rj
	}
	if a := c.Attach; a != nil {
		cj.Attach = &attachJSON{PID: a.PID, PIDFile: a.PIDFile, Process: a.Process, Cgroup: a.Cgroup}
	}
	return cj
}

func describeWorkload(w Workload) (workloadJSON, error) {
	wj := workloadJSON{Name: w.Name, Driver: w.Driver, Model: w.Model, Rate: w.Rate.String(),
		Concurrency: w.Concurrency, StartRate: w.StartRate.String(), StartConcurrency: w.StartConcurrency,
		Backlog: w.Backlog, DispatchQuantum: optDur(w.DispatchQuantum), Grace: dur(w.Grace), SLO: w.SLO}
	if w.Model == Open {
		wj.VUs = &vusJSON{Min: w.VUs.Min, Max: w.VUs.Max}
	}
	for _, s := range w.Stages {
		var target any = s.Rate.String()
		if w.Model == Closed {
			target = s.Concurrency
		} else if s.Rate.IsZero() {
			target = "0/s"
		}
		wj.Stages = append(wj.Stages, stageJSON{Duration: dur(s.Duration), Target: target})
	}
	if !w.Params.IsZero() {
		params, err := w.Params.JSON()
		if err != nil {
			return wj, err
		}
		wj.Params = params
	}
	return wj, nil
}

// matrixJSON writes the matrix as an object that keeps the variables' order.
func matrixJSON(vars []Variable) json.RawMessage {
	if len(vars) == 0 {
		return nil
	}
	return orderedObject(len(vars), func(i int) (string, any) { return vars[i].Name, append([]string{}, vars[i].Values...) })
}

// orderedObject is a JSON object of n members in their order (a Go map
// would sort them): member i's key and value as member gives them.
func orderedObject(n int, member func(i int) (key string, value any)) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k, v := member(i)
		writeString(&b, k)
		b.WriteByte(':')
		value, _ := json.Marshal(v) // strings and lists of them always marshal
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func dur(d time.Duration) string { return d.String() }

func optDur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// String writes r in the plan format: "500/s" or "5.8MB/s"; "" for zero.
func (r Rate) String() string {
	switch {
	case r.IsBytes():
		return formatByteRate(r.BytesPerSecond)
	case r.PerSecond != 0:
		return formatOpRate(r.PerSecond)
	}
	return ""
}

// formatOpRate writes an operation rate per second, or per minute or hour
// when that is a whole number and the per-second form is long ("1/m").
func formatOpRate(r float64) string {
	s := strconv.FormatFloat(r, 'f', -1, 64) + "/s"
	if len(s) <= 8 {
		return s
	}
	for _, per := range []struct {
		unit string
		secs float64
	}{{"m", 60}, {"h", 3600}} {
		if x := math.Round(r * per.secs); x/per.secs == r {
			return strconv.FormatFloat(x, 'f', -1, 64) + "/" + per.unit
		}
	}
	return s
}

// formatByteRate writes a byte rate per s, m or h, whichever reads back
// exactly ("1MB/m" is not a whole number of bytes per second).
func formatByteRate(b float64) string {
	for _, per := range []struct {
		unit string
		secs float64
	}{{"s", 1}, {"m", 60}, {"h", 3600}} {
		if x := math.Round(b * per.secs); x/per.secs == b {
			return formatBytes(x) + "/" + per.unit
		}
	}
	return formatBytes(math.Round(b)) + "/s"
}

// formatBytes writes a size with the largest unit that reads it back
// exactly: a binary unit when the size is a whole multiple of one, else a
// decimal unit.
func formatBytes(b float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.size && math.Mod(b, u.size) == 0 {
			return strconv.FormatFloat(b/u.size, 'f', -1, 64) + u.name
		}
	}
	for _, u := range []struct {
		name string
		size float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		s := strconv.FormatFloat(b/u.size, 'f', -1, 64) + u.name
		if v, err := units.ParseBytes(s); b >= u.size && err == nil && float64(v) == b {
			return s
		}
	}
	return strconv.FormatFloat(b, 'f', -1, 64) + "B"
}

// Secrets returns every non-empty value of an environment variable the plan
// references, longest first, so that callers can scrub them from anything
// they write. See also SecretRefs.
func (p *Plan) Secrets() []string {
	if p.env == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, v := range p.env.values {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// SecretRef is the value of an environment variable a plan references and
// the reference it came from, such as ${TOKEN}.
type SecretRef struct {
	Value, Ref string
}

// SecretRefs returns a SecretRef for every value of Secrets, in its order
// (longest first): what a writer replaces, in anything it writes, by the
// reference. A value read from several variables is named after the first
// in name order.
func (p *Plan) SecretRefs() []SecretRef {
	if p.env == nil {
		return nil
	}
	names := map[string]string{} // value → first name, in name order
	keys := make([]string, 0, len(p.env.values))
	for k := range p.env.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := p.env.values[k]; v != "" && names[v] == "" {
			names[v] = k
		}
	}
	var out []SecretRef
	for _, secret := range p.Secrets() {
		out = append(out, SecretRef{Value: secret, Ref: "${" + names[secret] + "}"})
	}
	return out
}
