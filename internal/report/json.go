package report

import (
	"encoding/json"
	"io"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/view"
)

// JSONVersion is the version of the summary.json format (docs/format/summary.md).
// Version 3: latency_ms, service_time_ms and ttfb_ms are of successful
// requests only.
const JSONVersion = 3

type jsonRun struct {
	Format    string         `json:"format"`
	Version   int            `json:"version"`
	Name      string         `json:"name"`
	Dir       string         `json:"dir,omitempty"` // the run directory (summary 3.3)
	Command   string         `json:"command,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	Host      string         `json:"host,omitempty"`
	Started   time.Time      `json:"started"`
	Ended     time.Time      `json:"ended,omitzero"`
	State     string         `json:"state"`
	Message   string         `json:"message,omitempty"`
	Workloads []jsonWorkload `json:"workloads"`
	Cells     []jsonCell     `json:"cells"`
	Gateway   []jsonOverhead `json:"gateway_overhead,omitempty"`
	SLO       *jsonSLO       `json:"slo,omitempty"`
	// Repeat and Repeated are a repeated run's (summary 2.5).
	Repeat   int            `json:"repeat,omitempty"`
	Repeated []jsonRepeated `json:"repeated,omitempty"`
}

type jsonWorkload struct {
	Name          string  `json:"name"`
	Short         string  `json:"short"`
	Cell          int     `json:"cell"`
	Profile       string  `json:"profile"`
	Driver        string  `json:"driver"`
	Model         string  `json:"model"`
	Target        string  `json:"target"`
	TargetRate    float64 `json:"target_rate,omitempty"`
	VUsMin        int     `json:"vus_min,omitempty"`
	VUsMax        int     `json:"vus_max,omitempty"`
	MaxVUs        int     `json:"max_vus_used"`
	Window        jsonWin `json:"window"`
	Requests      int64   `json:"requests"`
	Rate          float64 `json:"rate"`
	Dropped       int64   `json:"dropped"`
	RequestsTotal int64   `json:"requests_total"`
	ErrorsTotal   int64   `json:"errors_total"`
	DroppedTotal  int64   `json:"dropped_total"`
	SchedulerLag  jsonQ   `json:"scheduler_lag_ms"`
	Latency       *jsonQ  `json:"latency_ms,omitempty"` // every operation together (2.3)
	TTFB          *jsonQ  `json:"ttfb_ms,omitempty"`
	LatencyOf     string  `json:"latency_of"`               // "successful", or "all" from an old store (3)
	AllLatency    *jsonQ  `json:"latency_all_ms,omitempty"` // every request, when some failed (3)
	// Measures are the driver's measures, every operation together (2.4),
	// and Lengths and Goodput an LLM's token lengths and goodput (3.1).
	Measures map[string]jsonQ       `json:"measures_ms,omitempty"`
	Lengths  map[string]jsonLengths `json:"token_lengths,omitempty"`
	Goodput  *jsonGoodput           `json:"goodput,omitempty"`
	// Unissued and ClientWhy: arrivals the dispatcher did not issue, and
	// the signals of a client-bound verdict (summary 3).
	Unissued    uint64   `json:"unissued"`
	ClientBound bool     `json:"client_bound"`
	ClientWhy   string   `json:"client_bound_reason,omitempty"`
	Warnings    []string `json:"warnings"`
	Ops         []jsonOp `json:"operations"`
	// Facts and Checks are what the workload's driver told (summary 2.1).
	Facts  []driver.Fact `json:"facts,omitempty"`
	Checks []jsonCheck   `json:"checks,omitempty"`
	// Schedule is the ramping schedule of a workload with stages (3).
	Schedule *jsonSchedule `json:"schedule,omitempty"`
}

type jsonWin struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Seconds   float64   `json:"seconds"`
	Intervals int       `json:"intervals"`
	Rule      string    `json:"rule"`
}

type jsonOp struct {
	Name        string  `json:"name"`
	Requests    int64   `json:"requests"`
	OK          int64   `json:"ok"`
	SuccessRate float64 `json:"success_rate"`
	Rate        float64 `json:"rate"`
	BytesSentPS float64 `json:"bytes_sent_per_second"`
	BytesRecvPS float64 `json:"bytes_received_per_second"`
	Latency     jsonQ   `json:"latency_ms"`
	Service     jsonQ   `json:"service_time_ms"`
	TTFB        jsonQ   `json:"ttfb_ms"`
	Connect     jsonQ   `json:"connect_ms"`
	// LatencyOf says which requests Latency, Service and TTFB are of;
	// FailedLatency and AllLatency are there when some failed (3).
	LatencyOf     string                `json:"latency_of"`
	FailedLatency *jsonQ                `json:"latency_failed_ms,omitempty"`
	AllLatency    *jsonQ                `json:"latency_all_ms,omitempty"`
	Errors        []analysis.ErrorCount `json:"errors"`
	// Measures, Counters and StreamTokensPS are what the driver measured
	// and counted besides (summary 2.4), absent when nothing.
	Measures       map[string]jsonQ       `json:"measures_ms,omitempty"`
	Counters       map[string]jsonCounter `json:"counters,omitempty"`
	StreamTokensPS *jsonStreamRate        `json:"stream_tokens_per_second,omitempty"`
	// Lengths and Goodput are an LLM's token lengths and goodput (3.1).
	Lengths map[string]jsonLengths `json:"token_lengths,omitempty"`
	Goodput *jsonGoodput           `json:"goodput,omitempty"`
	// Connections is what the HTTP driver counted of its answers and
	// connections (3.2).
	Connections *jsonConnections `json:"connections,omitempty"`
}

// jsonConnections is an HTTP operation's connection counts in the window.
type jsonConnections struct {
	BodyBytesPS  float64 `json:"body_bytes_per_second"`
	Retries      int64   `json:"retries"`
	IdleCloses   int64   `json:"idle_closes"`
	StrayAnswers int64   `json:"stray_answers"`
}

type jsonQ struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func toJSONQ(q analysis.Quantiles) jsonQ {
	return jsonQ{Count: q.Count, P50: ms(q.P50), P90: ms(q.P90), P99: ms(q.P99), P999: ms(q.P999), Max: ms(q.Max), Mean: ms(q.Mean)}
}

// JSON writes the versioned summary of r.
func JSON(w io.Writer, r *view.Run) error {
	out := jsonRun{Format: "perflab-summary", Version: JSONVersion, Name: r.Name, Dir: r.Dir, Command: r.Command,
		Tool: r.Tool, Host: r.Host, Started: r.Started.UTC(), Ended: r.Ended.UTC(), State: r.State,
		Message: r.Message, Workloads: []jsonWorkload{}, Cells: []jsonCell{}, SLO: toJSONSLO(r.SLO)}
	if r.Ended.IsZero() {
		out.Ended = time.Time{}
	}
	notes := driverNotes(r)
	for _, s := range r.Workloads {
		jw := toJSONWorkload(s)
		toJSONDriver(&jw, notes[s.Workload.Name])
		out.Workloads = append(out.Workloads, jw)
	}
	for _, c := range r.AllCells() {
		out.Cells = append(out.Cells, toJSONCell(c))
	}
	if len(r.Overheads) > 0 {
		out.Gateway = toJSONOverheads(r.Overheads)
	}
	if r.Repeat > 1 {
		out.Repeat, out.Repeated = r.Repeat, toJSONRepeated(r.Repeated)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func toJSONWorkload(s *analysis.Summary) jsonWorkload {
	w := s.Workload
	jw := jsonWorkload{Name: w.Name, Short: w.DisplayName(), Cell: w.Cell, Profile: w.Profile,
		Driver: w.Driver, Model: w.Model, Target: w.Target, TargetRate: w.TargetRate, VUsMin: w.VUsMin, VUsMax: w.VUsMax, MaxVUs: w.MaxVUs,
		Window:   jsonWin{Start: s.Window.Start.UTC(), End: s.Window.End.UTC(), Seconds: s.Seconds, Intervals: s.Intervals, Rule: s.Window.Rule},
		Requests: s.Requests, Rate: s.Rate, Dropped: s.Dropped, RequestsTotal: s.RequestsTotal,
		ErrorsTotal: s.ErrorsTotal, DroppedTotal: s.DroppedTotal, SchedulerLag: toJSONQ(s.Lag),
		Latency: optJSONQ(s.Latency), TTFB: optJSONQ(s.TTFB), LatencyOf: latencyOf(s.LatencyOfAll), Measures: measuresJSON(s.Measures),
		Unissued: w.Unissued, ClientBound: s.ClientBound, ClientWhy: s.ClientWhy, Warnings: append([]string{}, s.Warnings...), Ops: []jsonOp{}}
	if s.HasFailedLatency() {
		jw.AllLatency = optJSONQ(s.AllLatency)
	}
	jw.Lengths, jw.Goodput = lengthsJSON(s.Measures), goodputJSON(s.Goodput())
	jw.Schedule = toJSONSchedule(w)
	for _, op := range s.Ops {
		errs := op.Errors
		if errs == nil {
			errs = []analysis.ErrorCount{}
		}
		jo := jsonOp{Name: op.Name, Requests: op.Requests, OK: op.OK, SuccessRate: op.SuccessRate,
			Rate: op.Rate, BytesSentPS: op.BytesSentPS, BytesRecvPS: op.BytesRecvPS,
			Latency: toJSONQ(op.Latency), Service: toJSONQ(op.Service), TTFB: toJSONQ(op.TTFB),
			Connect: toJSONQ(op.Connect), LatencyOf: latencyOf(op.LatencyOfAll), Errors: errs}
		if op.HasFailedLatency() {
			jo.FailedLatency, jo.AllLatency = optJSONQ(op.FailedLatency), optJSONQ(op.AllLatency)
		}
		toJSONMeasures(&jo, op)
		jw.Ops = append(jw.Ops, jo)
	}
	return jw
}

// latencyOf is the value of latency_of: which requests the latency is of.
func latencyOf(all bool) string {
	if all {
		return "all"
	}
	return "successful"
}

// jsonSchedule is a ramping schedule: from start, each stage moves the
// load linearly to its target over its seconds.
type jsonSchedule struct {
	Unit   string      `json:"unit"` // "ops/s" or "VUs"
	Start  float64     `json:"start"`
	Stages []jsonStage `json:"stages"`
	Text   string      `json:"text"`
}

type jsonStage struct {
	Seconds float64 `json:"seconds"`
	Target  float64 `json:"target"`
}

func toJSONSchedule(w analysis.Workload) *jsonSchedule {
	if w.Schedule == nil {
		return nil
	}
	unit, text := "VUs", scheduleText(w)
	if w.Model == "open" {
		unit = "ops/s"
	}
	js := &jsonSchedule{Unit: unit, Start: w.Schedule.Start, Stages: []jsonStage{}, Text: text}
	for _, st := range w.Schedule.Stages {
		js.Stages = append(js.Stages, jsonStage{Seconds: st.Duration.Seconds(), Target: st.Target})
	}
	return js
}

// optJSONQ is q in JSON, or nil when it has no value.
func optJSONQ(q analysis.Quantiles) *jsonQ {
	if q.Count == 0 {
		return nil
	}
	j := toJSONQ(q)
	return &j
}
