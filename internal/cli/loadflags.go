package cli

import (
	"cmp"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
)

// loadFlags are the flags perflab http and perflab llm share: the load
// model and its schedule, the request headers, the SLO gates and where the
// run goes. Each command adds its driver's own and builds its implicit
// plan with implicitPlan.
type loadFlags struct {
	rate, out, name                  string
	conc, vusMin, vusMax, backlog    int
	duration, grace, warmup, quantum time.Duration
	headers, slo                     listFlag
	jsonOut                          bool
	export                           exportFlags
	ci                               ciFlags
}

// loadCommand is what differs in the shared flags' defaults and words
// from one command to the other.
type loadCommand struct {
	name     string        // the default run name, the workload's
	duration time.Duration // --duration's default
	// rate, conc, vusMax and quantum say what --rate, --concurrency,
	// --vus-max and --dispatch-quantum set, in the command's words.
	rate, conc, vusMax, quantum string
	slo                         string // more of --slo's usage; "" for none
}

// quantumUsage is what --dispatch-quantum does, in both commands.
const quantumUsage = "open model: arrivals due within this of each other are sent together, each still timed from its intended start"

func (f *loadFlags) register(fs *flag.FlagSet, c loadCommand) {
	fs.StringVar(&f.rate, "rate", "", "open model: "+c.rate+" (latency from each arrival's intended start)")
	fs.IntVar(&f.conc, "concurrency", 0, fmt.Sprintf("closed model: %s (default %d when no --rate)", c.conc, defaultConcurrency))
	fs.IntVar(&f.conc, "c", 0, "short for --concurrency")
	fs.DurationVar(&f.duration, "duration", c.duration, "how long to apply load")
	fs.Var(&f.slo, "slo", sloUsage+c.slo)
	fs.Var(&f.headers, "H", "request header 'Name: value' (repeatable); ${VAR} is read from the environment")
	fs.IntVar(&f.vusMin, "vus-min", plan.DefaultVUsMin, "open model: VUs started before the first arrival")
	fs.IntVar(&f.vusMax, "vus-max", plan.DefaultVUsMax, "open model: "+c.vusMax+"; an arrival finding all busy is dropped")
	fs.IntVar(&f.backlog, "backlog", 0, "open model: arrivals that may wait for a VU at --vus-max (0: drop at once)")
	fs.DurationVar(&f.quantum, "dispatch-quantum", engine.DefaultQuantum, c.quantum)
	fs.DurationVar(&f.grace, "grace", plan.DefaultGrace, "time in-flight requests get to finish at the end")
	fs.DurationVar(&f.warmup, "warmup", 0, "exclude this much from the start of the statistics (default: first interval)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the JSON summary to stdout instead of the table")
	fs.StringVar(&f.out, "out", "perflab-runs", "parent directory for the run directory")
	fs.StringVar(&f.name, "name", c.name, "name of the run (part of its directory name)")
	f.export.register(fs)
	f.ci.register(fs)
}

// implicitPlan is the implicit plan of the flags: one workload, named
// workload, of driver with params, in a profile of its own, each value at
// the flag that gave it, so that a problem the plan's checks find names
// the flag. bad gets what is wrong with the flags' own syntax, which the
// plan format does not share.
func (f *loadFlags) implicitPlan(workload, driver string, params []plan.Param, given func(string) bool, bad func(string, ...any)) (*plan.Plan, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot locate the working directory: %w", err)
	}
	ps, err := plan.ParamsOf(params...)
	if err != nil {
		return nil, err
	}
	w := plan.Workload{Name: workload, Driver: driver, Grace: f.grace, Params: ps}
	w.SetPos("grace", plan.Pos{Flag: "--grace"})
	f.model(&w, given, bad)
	pr := plan.Profile{Name: workload, Duration: f.duration, Warmup: f.warmup, Workloads: []plan.Workload{w}}
	pr.SetPos("duration", plan.Pos{Flag: "--duration"})
	pr.SetPos("warmup", plan.Pos{Flag: "--warmup"})
	return &plan.Plan{Name: cmp.Or(strings.TrimSpace(f.name), workload), Dir: dir, Implicit: true,
		SampleInterval: sampleEveryFor(f.duration, f.warmup), StopGrace: plan.DefaultStopGrace, Profiles: []plan.Profile{pr}}, nil
}

// header is the request header of the -H flags, ${VAR} read from the
// environment; a name given twice has its values joined with ", ", as
// HTTP lets a list be sent.
func (f *loadFlags) header(bad func(string, ...any)) map[string]string {
	h := map[string]string{}
	for _, line := range f.headers {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" {
			bad("header %q: want 'Name: value'", line)
			continue
		}
		v, err := expandEnv(strings.TrimSpace(v))
		if err != nil {
			bad("header %s: %v", strings.TrimSpace(k), err)
		}
		k = http.CanonicalHeaderKey(strings.TrimSpace(k))
		if old, ok := h[k]; ok {
			v = old + ", " + v
		}
		h[k] = v
	}
	return h
}

// model sets the load model of w from --rate (open) or --concurrency
// (closed, 50 VUs when not given), each value at its flag. The flags of
// the other model, when given, are set too: the plan's check refuses
// them.
func (f *loadFlags) model(w *plan.Workload, given func(string) bool, bad func(string, ...any)) {
	at := func(key, flag string) { w.SetPos(key, plan.Pos{Flag: "--" + flag}) }
	conc := given("c") || given("concurrency")
	closed := f.rate == ""
	if closed || conc {
		w.Model, w.Concurrency = plan.Closed, f.conc
		if !conc {
			w.Concurrency = defaultConcurrency
		}
		at("concurrency", "concurrency")
	}
	if closed {
		at("model", "rate") // the flag that makes a workload open
	} else {
		r, err := plan.ParseRate("--rate", f.rate) // as a plan's rate: reads it
		rate := r.PerSecond
		switch {
		case err != nil:
			bad("%v", err)
		case !(rate > 0):
			bad("--rate %q: want a positive rate like 5000/s (requests per second)", f.rate)
		}
		if !(rate > 0) {
			rate = 1 // a stand-in, so that the plan's checks of the other flags still run
		}
		w.Model, w.Rate = plan.Open, plan.Rate{PerSecond: rate}
		at("rate", "rate")
	}
	if given("vus-min") || given("vus-max") || !closed {
		w.VUs = plan.VUs{Min: f.vusMin, Max: f.vusMax}.WithDefaults(given("vus-min"), given("vus-max"))
		at("vus.min", "vus-min")
		at("vus.max", "vus-max")
		if closed { // the pool as a whole is refused, by the flag given first
			flag := "vus-max"
			if given("vus-min") {
				flag = "vus-min"
			}
			at("vus", flag)
		}
	}
	if given("backlog") || !closed {
		w.Backlog = f.backlog
		at("backlog", "backlog")
	}
	if given("dispatch-quantum") { // else the engine's default, as a plan's
		w.DispatchQuantum = f.quantum
		at("dispatch_quantum", "dispatch-quantum")
	}
}
