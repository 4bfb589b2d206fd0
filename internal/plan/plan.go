// Package plan reads perflab plans: YAML files that say which components of
// a system under test to start or attach to, which configuration matrix to
// sweep, and which load profiles to run against every cell of it.
//
// The format is specified in docs/format/plan.md. In short:
//
//	name: ballast-gomemlimit          # required
//	description: text                 # optional
//	sample_interval: 1s               # observers' sample period (default 1s)
//	stop_grace: 10s                   # components' default stop grace (default 10s)
//	components:                       # optional
//	  - name: distributor             # required, unique, [a-z0-9_-]+
//	    group: ingest                 # optional
//	    run:                          # exactly one of run and attach
//	      command: "{{perflab}}"      # required
//	      args: [target, http, --addr, "127.0.0.1:18081"]
//	      env: {GOMEMLIMIT: "{{gomemlimit}}", TOKEN: "${MY_TOKEN}"}
//	      dir: ./work                 # default: the plan file's directory
//	      ready: {http: "http://127.0.0.1:18081/", timeout: 30s}  # or tcp: host:port
//	      stop_grace: 5s
//	    attach: {pid: 1234}           # or pid_file, process or cgroup: exactly one
//	    observe: prometheus           # or local (the default); then no run or attach needed
//	    prometheus: {url: "http://127.0.0.1:9090", preset: self, instance: "127.0.0.1:18081"}
//	    metrics: http://127.0.0.1:18081/metrics
//	    metric_names: [go_memstats_heap_inuse_bytes]
//	    data_dirs: [./data]
//	matrix:                           # optional, ordered
//	  gomemlimit: ["off", 2GiB]
//	repeat: 3                         # every cell 3 times, interleaved (default 1)
//	profiles:                         # required, ordered
//	  - name: small
//	    duration: 30s                 # required
//	    warmup: 5s
//	    slo: ["p99 < 200ms"]          # SLO gates on every workload (slo.ParseGate)
//	    workloads:                    # required, run concurrently
//	      - name: get
//	        driver: http
//	        rate: 500/s               # or 5.8MB/s; or concurrency: 16; or stages
//	        vus: {min: 10, max: 1000} # open model
//	        params: {url: "http://127.0.0.1:18081/"}   # opaque to this package
//	        slo: ["error_rate < 0.1%"] # SLO gates on this workload
//	compare:                          # optional: systems run side by side
//	  - {a: prometheus, b: vm}        # components, groups or workloads
//	export:                           # optional: send the measurements live
//	  - kind: remote-write            # or otlp (http(s):// or grpc(s)://)
//	    url: http://127.0.0.1:8428/api/v1/write
//	    headers: {Authorization: "Bearer ${VM_TOKEN}"}
//	    interval: 1s                  # how often it is pushed (default 1s)
//	    native_histograms: true       # the latency as a native histogram too (remote-write)
//	output:                           # optional: files for CI, relative to the plan's directory
//	  junit: perflab-junit.xml        # the run's checks and SLO gates as JUnit XML
//	  csv: perflab.csv                # its intervals, one row per operation per interval
//
// String fields of components and every string in workload params are
// templates: {{name}} is a matrix variable or a built-in (perflab, run_dir,
// cell), ${NAME} an environment variable read when the plan is loaded.
// $${ stands for a literal ${ and {{{{ for a literal {{.
//
// Parse and Load decode strictly: unknown keys, wrong types and bad values
// are reported together with every failed Validate check, each at its
// file:line:col, as Errors. A Plan holds templates, never the values of
// environment variables; Expand gives the concrete form of one matrix cell.
package plan

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Plan is a decoded plan. Its exported fields hold the plan as written, with
// defaults applied and references unexpanded, so they can be shown or stored
// without leaking secrets.
type Plan struct {
	Name           string
	Description    string
	SampleInterval time.Duration // how often observers sample components
	// ResultInterval is how long each stored interval of a workload's
	// results covers: its histograms, counts and errors. Per-interval
	// figures (the time series, the intervals of a comparison) are of it.
	// 0 (built in code) is the default, 1 s.
	ResultInterval time.Duration
	StopGrace      time.Duration // default Run.StopGrace
	Components     []Component
	Matrix         []Variable // in file order
	Repeat         int        // times every cell runs, interleaved (RunCells); 1 by default, 0 (built in code) is once
	Profiles       []Profile  // in file order
	Compare        []Pair     // systems run side by side, compared in the report
	Export         []Export   // where the run's measurements are sent live
	Output         Output     // the files for CI a run writes besides its directory

	File string // the path given to Load or Parse
	Dir  string // absolute directory that relative paths resolve against

	// Implicit marks a plan built in Go for a command that runs without a
	// plan file (perflab http, from its flags): its one cell and its one
	// profile are not recorded as such, its workloads are named by their
	// own names, and reports show them alone (docs/format/results.md: a
	// run without a plan). It has one profile and no matrix.
	Implicit bool

	env *envValues // values of the ${NAME} references, read at load
	at  where
}

// Variable is one dimension of the matrix.
type Variable struct {
	Name   string
	Values []string // in file order, as written
	at     where
}

// Component is a process of the system under test that perflab starts (Run)
// or attaches to (Attach): exactly one of the two is set, unless the
// component is observed through Prometheus, which needs neither.
type Component struct {
	Name        string
	Group       string // for reports
	Run         *Run
	Attach      *Attach
	Observe     string      // ObserveLocal ("" too) or ObservePrometheus
	Prometheus  *Prometheus // where and what to query; set with ObservePrometheus
	Metrics     string      // Prometheus /metrics URL, optional
	MetricNames []string    // extra metric names to record
	// MetricsPreset names a serving engine (observe.ServingEngines) whose
	// scheduler metrics the /metrics scrape records besides MetricNames.
	MetricsPreset string
	DataDirs      []string // directories measured on disk
	at            where
}

// Run says how to start a component.
type Run struct {
	Command   string
	Args      []string
	Env       []EnvVar // added to the inherited environment, in file order
	Dir       string   // working directory
	Ready     *Ready   // nil: the component is ready once started
	StopGrace time.Duration
	at        where
}

// EnvVar is one environment variable given to a started component.
type EnvVar struct {
	Name, Value string
}

// Ready is a readiness probe: exactly one of HTTP (a URL that must answer
// with a status below 400) and TCP (a host:port that must accept a
// connection) is set.
type Ready struct {
	HTTP    string
	TCP     string
	Timeout time.Duration
	at      where
}

// Attach says how to find a running component: exactly one field is set.
type Attach struct {
	PID     int
	PIDFile string
	Process string // matched against the command line
	Cgroup  string // a cgroup v2 directory
	at      where
}

// Profile is one load level: workloads run together for Duration.
type Profile struct {
	Name      string
	Duration  time.Duration
	Warmup    time.Duration // excluded from statistics
	Workloads []Workload
	SLO       []string // gates on every workload of the profile, as slo.ParseGate reads them
	at        where
}

// Model is how a workload applies load.
type Model string

// The load models.
const (
	Open   Model = "open"   // arrivals on a schedule (rate), VUs from a pool
	Closed Model = "closed" // a number of VUs, each looping (concurrency)
)

// Workload is one stream of load in a profile. In the open model exactly one
// of Rate and Stages is set; in the closed model exactly one of Concurrency
// and Stages.
type Workload struct {
	Name             string
	Driver           string
	Model            Model
	Rate             Rate // open model: constant rate
	Concurrency      int  // closed model: constant number of VUs
	StartRate        Rate // open model with stages: rate before the first stage
	StartConcurrency int  // closed model with stages: VUs before the first stage
	Stages           []Stage
	VUs              VUs           // open model
	Backlog          int           // open model: arrivals that may wait for a VU at VUs.Max
	DispatchQuantum  time.Duration // open model: the dispatcher wakes at most this often; 0: the engine's default
	Grace            time.Duration
	Params           Params   // driver configuration, opaque here
	SLO              []string // gates on this workload, as slo.ParseGate reads them
	at               where
}

// Rate is an operation rate or a byte rate; at most one field is non-zero.
// Drivers that send payloads convert a byte rate to operations per second.
type Rate struct {
	PerSecond      float64 // operations per second
	BytesPerSecond float64
}

// IsZero reports whether r is no rate at all.
func (r Rate) IsZero() bool { return r.PerSecond == 0 && r.BytesPerSecond == 0 }

// IsBytes reports whether r is a byte rate.
func (r Rate) IsBytes() bool { return r.BytesPerSecond != 0 }

// Stage is one leg of a ramping schedule: over Duration the load moves
// linearly to the target, a Rate in the open model, a Concurrency in the
// closed model.
type Stage struct {
	Duration    time.Duration
	Rate        Rate
	Concurrency int
	at          where
}

// VUs bounds the open model's pool of virtual users.
type VUs struct {
	Min int // started before the first arrival
	Max int // the cap; an arrival finding all busy waits in the backlog or is dropped
}

// Params is a workload's driver configuration: a YAML subtree kept with its
// positions. See Decode and JSON.
type Params struct {
	node  *yaml.Node        // a mapping, or nil when the plan gives none
	file  string            // for error positions
	vars  map[string]string // {{name}} values; nil leaves {{name}} as written
	env   *envValues
	flags map[string]string // params built from flags (ParamsOf): each key's flag; nil in a plan file
}

// envValues holds the values of environment variables a plan references.
// It sits behind a pointer so that printing a Plan with %v shows an address
// rather than secrets.
type envValues struct {
	values map[string]string
}

func (e *envValues) lookup(name string) (string, bool) {
	if e == nil {
		return "", false
	}
	v, ok := e.values[name]
	return v, ok
}
