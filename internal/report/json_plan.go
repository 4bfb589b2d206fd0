package report

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/view"
)

type jsonCell struct {
	Index      int              `json:"index"`
	Name       string           `json:"name"`
	Vars       []view.Var       `json:"vars"`
	Implicit   bool             `json:"implicit"`
	State      string           `json:"state,omitempty"`
	Message    string           `json:"message,omitempty"`
	Started    time.Time        `json:"started,omitzero"`
	Ended      time.Time        `json:"ended,omitzero"`
	Components []jsonComponent  `json:"components"`
	Warnings   []string         `json:"warnings,omitempty"` // summary 3
	Phases     []jsonPhase      `json:"phases"`
	Insights   *jsonInsights    `json:"insights,omitempty"`
	SideBySide []jsonSideBySide `json:"side_by_side,omitempty"`
	Repetition int              `json:"repetition,omitempty"` // summary 2.5
}

type jsonComponent struct {
	Name       string    `json:"name"`
	Group      string    `json:"group"`
	Kind       string    `json:"kind"`
	PID        int       `json:"pid,omitempty"`
	MetricsURL string    `json:"metrics_url,omitempty"`
	DataDirs   []string  `json:"data_dirs,omitempty"`
	Exited     time.Time `json:"exited,omitzero"`
	ExitText   string    `json:"exit_text,omitempty"`
	Stop       *jsonStop `json:"stop,omitempty"` // summary 3
}

// jsonStop is how perflab stopped a component it started.
type jsonStop struct {
	Time         time.Time `json:"time"`
	GraceSeconds float64   `json:"grace_seconds"`
	Killed       bool      `json:"killed"`
	How          string    `json:"how"`
}

type jsonPhase struct {
	Profile       string         `json:"profile"`
	Implicit      bool           `json:"implicit"`
	State         string         `json:"state,omitempty"`
	Message       string         `json:"message,omitempty"`
	Start         time.Time      `json:"start,omitzero"`
	LoadEnd       time.Time      `json:"load_end,omitzero"`
	WarmupSeconds float64        `json:"warmup_seconds"`
	Window        jsonSpan       `json:"window"`
	Workloads     []string       `json:"workloads"`
	Workers       []jsonWorker   `json:"workers,omitempty"` // a distributed phase's (summary 3)
	Resources     *jsonResources `json:"resources"`
}

type jsonSpan struct {
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	Rule  string    `json:"rule"`
}

type jsonResources struct {
	Window         jsonSpan             `json:"window"`
	Samples        int                  `json:"samples"`
	StepSeconds    float64              `json:"step_seconds"`
	CoresAvailable float64              `json:"cores_available"`
	ClientBound    bool                 `json:"client_bound"`
	GeneratorCPU   float64              `json:"generator_cpu_cores,omitempty"` // the P99 that made it so (summary 3)
	MachineBound   bool                 `json:"machine_bound,omitempty"`
	MachineWhy     string               `json:"machine_bound_reason,omitempty"`
	MachineBusy    bool                 `json:"machine_busy,omitempty"`
	BusyWhy        string               `json:"machine_busy_reason,omitempty"`
	Warnings       []string             `json:"warnings"`
	Components     []jsonCompResources  `json:"components"`
	Totals         map[string]jsonTotal `json:"totals"`
}

type jsonCompResources struct {
	Name         string              `json:"name"`
	Group        string              `json:"group"`
	Kind         string              `json:"kind"`
	MemoryMetric string              `json:"memory_metric"`
	Memory       *jsonStat           `json:"memory_bytes"`
	CPUMetric    string              `json:"cpu_metric"`
	CPU          *jsonStat           `json:"cpu_cores"`
	Disk         *jsonDisk           `json:"disk"`
	Metrics      map[string]jsonStat `json:"metrics"`
	// Named are the metrics the plan listed (metric_names), by name (3).
	Named map[string]jsonNamedMetric `json:"named_metrics,omitempty"`
	// Serving are its own figures as an LLM serving engine (3.3).
	Serving *jsonServing `json:"serving,omitempty"`
}

// jsonServing is analysis.Serving.
type jsonServing struct {
	Engine       string          `json:"engine"`
	Running      jsonStat        `json:"running"`
	Waiting      jsonStat        `json:"waiting"`
	KVCacheUsage jsonStat        `json:"kv_cache_usage"`
	HitRate      *float64        `json:"prefix_cache_hit_rate"`
	Queries      float64         `json:"prefix_cache_queries"`
	TTFT         jsonServerTimes `json:"ttft_ms"`
	E2E          jsonServerTimes `json:"e2e_ms"`
}

// jsonServerTimes are analysis.ServerTimes in milliseconds; p50 is null
// without a request, p99 without enough; each bucket is [lo, hi], hi null
// for +Inf.
type jsonServerTimes struct {
	Count     float64    `json:"count"`
	P50       *float64   `json:"p50"`
	P50Bucket []*float64 `json:"p50_bucket,omitempty"`
	P99       *float64   `json:"p99"`
	P99Bucket []*float64 `json:"p99_bucket,omitempty"`
}

// bucketJSON is a quantile's estimate and bucket in milliseconds.
func bucketJSON(q analysis.BucketQuantile) (*float64, []*float64) {
	est, lo := round6(ms(q.Est)), round6(ms(q.Lo))
	b := []*float64{&lo, nil}
	if q.Hi != 0 {
		hi := round6(ms(q.Hi))
		b[1] = &hi
	}
	return &est, b
}

func toJSONServing(s *analysis.Serving) *jsonServing {
	if s == nil {
		return nil
	}
	times := func(t analysis.ServerTimes) jsonServerTimes {
		j := jsonServerTimes{Count: t.Count}
		if t.Count > 0 {
			j.P50, j.P50Bucket = bucketJSON(t.P50)
		}
		if t.HasP99 {
			j.P99, j.P99Bucket = bucketJSON(t.P99)
		}
		return j
	}
	j := &jsonServing{Engine: s.Engine, Running: toJSONStat(s.Running), Waiting: toJSONStat(s.Waiting),
		KVCacheUsage: toJSONStat(s.KVUsage), Queries: s.Queries, TTFT: times(s.TTFT), E2E: times(s.E2E)}
	if s.HasHitRate {
		r := round6(s.HitRate)
		j.HitRate = &r
	}
	return j
}

// jsonNamedMetric is a listed metric's stat over the window; a counter's
// is of its rate per second.
type jsonNamedMetric struct {
	Counter bool `json:"counter"`
	jsonStat
}

// jsonStat is a Stat; P99 is null when the sample cannot support one.
type jsonStat struct {
	Samples int      `json:"samples"`
	P99     *float64 `json:"p99"`
	Max     float64  `json:"max"`
	Avg     float64  `json:"avg"`
}

// jsonDisk is summary 3's own object for disk_bytes (the disk observer's
// Level); the metrics of other observers are in jsonCompResources.Metrics.
type jsonDisk struct {
	Samples  int     `json:"samples"`
	EndBytes float64 `json:"end_bytes"`
	MaxBytes float64 `json:"max_bytes"`
}

type jsonTotal struct {
	Components      int      `json:"components"`
	SumOfComponents jsonStat `json:"sum_of_components"`
	SummedSeries    jsonStat `json:"summed_series"`
}

func toJSONCell(c *view.Cell) jsonCell {
	jc := jsonCell{Index: c.Index, Name: c.Name, Vars: append([]view.Var{}, c.Vars...), Implicit: c.Implicit,
		State: c.State, Message: c.Message, Started: utc(c.Started), Ended: utc(c.Ended),
		Components: []jsonComponent{}, Phases: []jsonPhase{}, Insights: toJSONInsights(c.Insights),
		SideBySide: toJSONSideBySide(c.SideBySide), Repetition: c.Repetition}
	for _, comp := range c.Components {
		jcomp := jsonComponent{Name: comp.Name, Group: comp.Group, Kind: comp.Kind,
			PID: comp.PID, MetricsURL: comp.MetricsURL, DataDirs: comp.DataDirs, Exited: utc(comp.Exited), ExitText: comp.ExitText}
		if s := comp.Stop; s != nil {
			jcomp.Stop = &jsonStop{Time: utc(s.Time), GraceSeconds: s.Grace.Seconds(), Killed: s.Killed, How: s.How}
		}
		jc.Components = append(jc.Components, jcomp)
	}
	for _, w := range killedWarnings(c) {
		jc.Warnings = append(jc.Warnings, strings.ReplaceAll(w, "`", ""))
	}
	for _, p := range c.Phases {
		jp := jsonPhase{Profile: p.Profile, Implicit: p.Implicit, State: p.State, Message: p.Message,
			Start: utc(p.Start), LoadEnd: utc(p.LoadEnd), WarmupSeconds: p.Warmup.Seconds(),
			Window: span(p.Window), Workloads: []string{}, Workers: jsonWorkers(p.Workers), Resources: toJSONResources(p.Resources)}
		for _, s := range p.Workloads {
			jp.Workloads = append(jp.Workloads, s.Workload.Name)
		}
		jc.Phases = append(jc.Phases, jp)
	}
	return jc
}

func toJSONResources(r *analysis.Resources) *jsonResources {
	if r == nil {
		return nil
	}
	jr := &jsonResources{Window: span(r.Window), Samples: r.Ticks, StepSeconds: r.Step.Seconds(),
		CoresAvailable: round6(r.CoresAvailable), ClientBound: r.ClientBound, GeneratorCPU: round6(r.GeneratorCPU),
		MachineBound: r.MachineBound, MachineWhy: r.MachineWhy, MachineBusy: r.MachineBusy, BusyWhy: r.BusyWhy, Warnings: append([]string{}, r.Warnings...),
		Components: []jsonCompResources{},
		Totals: map[string]jsonTotal{
			"memory_bytes": {r.Memory.Components, toJSONStat(r.Memory.Sum), toJSONStat(r.Memory.Summed)},
			"cpu_cores":    {r.CPU.Components, toJSONStat(r.CPU.Sum), toJSONStat(r.CPU.Summed)},
		}}
	for _, c := range r.Components {
		jc := jsonCompResources{Name: c.Name, Group: c.Group, Kind: c.Kind, MemoryMetric: c.MemoryMetric,
			CPUMetric: c.CPUMetric, Metrics: map[string]jsonStat{}}
		if c.MemoryMetric != "" {
			s := toJSONStat(c.Memory)
			jc.Memory = &s
		}
		if c.CPUMetric != "" {
			s := toJSONStat(c.CPU)
			jc.CPU = &s
		}
		if d, ok := c.Observed[observe.DiskBytes]; ok {
			jc.Disk = &jsonDisk{Samples: d.Stat.N, EndBytes: round6(d.End), MaxBytes: round6(d.Stat.Max)}
		}
		for m, s := range c.Metrics {
			jc.Metrics[m] = toJSONStat(s)
		}
		for _, m := range c.Named {
			if jc.Named == nil {
				jc.Named = map[string]jsonNamedMetric{}
			}
			jc.Named[m.Name] = jsonNamedMetric{Counter: m.Counter, jsonStat: toJSONStat(m.Stat)}
		}
		jc.Serving = toJSONServing(c.Serving)
		jr.Components = append(jr.Components, jc)
	}
	return jr
}

func toJSONStat(s analysis.Stat) jsonStat {
	js := jsonStat{Samples: s.N, Max: round6(s.Max), Avg: round6(s.Avg)}
	if s.HasP99() {
		p := round6(s.P99)
		js.P99 = &p
	}
	return js
}

// round6 rounds a resource figure for the summary: to whole units from a
// million up (bytes), else to six significant digits, which drops the
// floating-point noise of sums (0.9425000000000008 → 0.9425).
func round6(v float64) float64 {
	if math.Abs(v) >= 1e6 || v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return math.Round(v)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func span(w analysis.Window) jsonSpan {
	return jsonSpan{Start: utc(w.Start), End: utc(w.End), Rule: w.Rule}
}

// utc is t in UTC, and the zero time for the zero time.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
