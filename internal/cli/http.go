package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	httpdriver "github.com/perflab/perflab/internal/driver/http"
	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/units"
)

// listFlag is a repeatable string flag: -H, --slo, compare's --a and --b.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type httpFlags struct {
	rate, body, bodyFile, proto, cacert, out, name string
	expectStatus                                   string
	conc, vusMin, vusMax, backlog, followRedirects int
	duration, timeout, grace, warmup, quantum      time.Duration
	method                                         string
	headers, slo                                   listFlag
	insecure, jsonOut                              bool
	export                                         exportFlags
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.rate, "rate", "", "open model: arrival rate, e.g. 5000/s (latency from each arrival's intended start)")
	fs.IntVar(&f.conc, "concurrency", 0, "closed model: number of concurrent VUs (default 50 when no --rate)")
	fs.IntVar(&f.conc, "c", 0, "short for --concurrency")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "how long to apply load")
	fs.StringVar(&f.method, "m", "GET", "HTTP method")
	fs.Var(&f.slo, "slo", sloUsage)
	fs.Var(&f.headers, "H", "request header 'Name: value' (repeatable); ${VAR} is read from the environment")
	fs.StringVar(&f.body, "d", "", "request body")
	fs.StringVar(&f.bodyFile, "body-file", "", "read the request body from a file")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "per-request timeout, body included (HTTP/1.1 fires it within 1/64 of it, or 1 ms, after)")
	fs.StringVar(&f.proto, "proto", "auto", "auto, h1, h2 (TLS) or h2c (cleartext HTTP/2)")
	fs.StringVar(&f.expectStatus, "expect-status", httpdriver.DefaultExpectStatus,
		"final statuses that count as a success, e.g. 200-299,304; any other fails (429 rate_limited, 4xx, 5xx, else status_other)")
	fs.IntVar(&f.followRedirects, "follow-redirects", 0,
		"follow up to N redirects (301, 302, 303, 307, 308), timed as one request; 0 takes the redirect as the answer (k6 and oha follow 10)")
	fs.StringVar(&f.cacert, "cacert", "", "PEM file of CA certificates to trust")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fs.IntVar(&f.vusMin, "vus-min", 10, "open model: VUs started before the first arrival")
	fs.IntVar(&f.vusMax, "vus-max", 1000, "open model: most VUs; an arrival finding all busy is dropped")
	fs.IntVar(&f.backlog, "backlog", 0, "open model: arrivals that may wait for a VU at --vus-max (0: drop at once)")
	fs.DurationVar(&f.quantum, "dispatch-quantum", engine.DefaultQuantum,
		"open model: arrivals due within this of each other are sent together, each still timed from its intended start; finer than 1ms and without --backlog, VUs that finish also take due arrivals (250us: lag near 40µs, about twice the CPU)")
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "time in-flight requests get to finish at the end")
	fs.DurationVar(&f.warmup, "warmup", 0, "exclude this much from the start of the statistics (default: first interval)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the JSON summary to stdout instead of the table")
	fs.StringVar(&f.out, "out", "perflab-runs", "parent directory for the run directory")
	fs.StringVar(&f.name, "name", "http", "name of the run (part of its directory name)")
	f.export.register(fs)
}

// parseInterspersed parses flags that may come before or after positional
// arguments, as `perflab http URL --rate 100/s` expects.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagError maps a flag parsing error: --help is not a failure, anything
// else is a usage error.
func flagError(err error) error {
	if err == flag.ErrHelp {
		return err
	}
	return usageErrorf("%v", err)
}

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

func (e *env) httpCmd(ctx context.Context, args []string) error {
	var f httpFlags
	fs := newFlagSet("http", e)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab http URL [--rate 5000/s | --concurrency 64] [--duration 30s] [-m METHOD] [-H 'K: V'] [-d BODY | --body-file F] [--timeout 5s] [--json] [--out DIR] [--export KIND=URL]…")
		fs.PrintDefaults()
		fmt.Fprint(e.stderr, "\n"+httpdriver.RulesText())
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab http needs exactly one URL, got %d arguments", len(pos))
	}
	pw, err := f.workload(pos[0], func(name string) bool { return set(fs, name) })
	if err != nil {
		return err
	}
	targets, err := f.export.build()
	if err != nil {
		return err
	}
	e.useScrubber(f.scrubber(pos[0]))
	job := e.job(f.out, results.Meta{Name: f.name, Command: recordedCommand(append([]string{"perflab", "http"}, args...)),
		Extra: readback.WithSLO(nil, run.GateSpecs(nil, f.slo))})
	job.Bare = &run.Phase{Profile: plan.Profile{Name: pw.Eng.Name, Duration: f.duration, Warmup: f.warmup},
		Workloads: []run.Workload{pw}, WarmupBy: "the user"}
	job.SampleEvery = sampleEveryFor(f.duration, f.warmup) // the generator itself, for the client-bound rule
	job.Export = targets
	return e.runJob(ctx, job, f.jsonOut)
}

// sampleEveryFor is how often perflab http samples the generator over a
// load of duration d: a twelfth of the steady-state window (what is left
// after the warm-up, or after the first second), between 100 ms and 1 s,
// so that the window holds the samples a P99 of its CPU needs.
func sampleEveryFor(d, warmup time.Duration) time.Duration {
	every := (d - max(warmup, time.Second)) / 12
	return min(max(every.Truncate(10*time.Millisecond), 100*time.Millisecond), time.Second)
}

// workload validates every flag at once and builds the workload; given
// tells the flags given on the command line.
func (f *httpFlags) workload(rawURL string, given func(string) bool) (run.Workload, error) {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	cfg := httpdriver.Config{URL: rawURL, Method: strings.ToUpper(f.method), Header: f.header(bad),
		Proto: f.proto, CAFile: f.cacert, InsecureSkipVerify: f.insecure,
		ExpectStatus: f.expectStatus, FollowRedirects: f.followRedirects}
	if f.timeout > 0 { // checkTimes says what is wrong with any other
		cfg.Timeout = f.timeout
	}
	cfg.Body = f.requestBody(bad)
	for _, err := range cfg.Validate() {
		bad("%v", err)
	}
	f.checkTimes(bad)
	w := engine.Workload{Name: "http", Grace: f.grace}
	desc := results.Workload{Name: "http", Driver: "http", Target: cfg.Method + " " + secret.URL(rawURL),
		Duration: f.duration, Grace: f.grace}
	f.model(&w, &desc, given, bad)
	gates, gateErrs := slo.ParseGates(f.slo)
	for _, err := range gateErrs {
		bad("--slo: %v", err)
	}
	for _, g := range gates {
		if g.Workload != "" && g.Workload != w.Name {
			bad("--slo '%s': perflab http runs one workload, %q, not %q", g.Expr, w.Name, g.Workload)
		}
	}
	if len(problems) == 0 {
		for _, err := range w.Validate() { // what the checks above missed, if anything
			if !strings.Contains(err.Error(), "no driver") {
				bad("%v", err)
			}
		}
	}
	if len(problems) > 0 {
		return run.Workload{}, usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	d, err := httpdriver.New(cfg)
	if err != nil {
		return run.Workload{}, usageErrorf("%v", err)
	}
	desc.Params, _ = json.Marshal(map[string]any{"method": cfg.Method, "headers": secret.Headers(cfg.Header),
		"body_bytes": len(cfg.Body), "timeout": f.timeout.String(), "proto": f.proto,
		"expect_status": f.expectStatus, "follow_redirects": f.followRedirects})
	spec := registry.Spec{Target: desc.Target, OpBytes: int64(len(cfg.Body)), New: func() (driver.Driver, error) { return d, nil }}
	return run.Workload{Spec: spec, Eng: w, Desc: desc, Length: f.duration}, nil
}

// scrubber is the scrubber of the run: the values of the environment
// variables the headers read, the credential-named headers' values written
// literally and the credentials in the URL (those secret.URL hides).
func (f *httpFlags) scrubber(rawURL string) *secret.Scrubber {
	set := secret.Set{}
	for _, line := range f.headers {
		set.Header(line)
	}
	set.URL(rawURL)
	f.export.secrets(set)
	return set.Scrubber()
}

// header is the request header of the -H flags, ${VAR} read from the
// environment.
func (f *httpFlags) header(bad func(string, ...any)) http.Header {
	h := http.Header{}
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
		h.Add(strings.TrimSpace(k), v)
	}
	return h
}

// requestBody is the body of -d or --body-file.
func (f *httpFlags) requestBody(bad func(string, ...any)) []byte {
	switch {
	case f.body != "" && f.bodyFile != "":
		bad("give -d or --body-file, not both")
	case f.bodyFile != "":
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			bad("cannot read --body-file: %v", err)
		}
		return b
	case f.body != "":
		return []byte(f.body)
	}
	return nil
}

// checkTimes checks the durations both models take.
func (f *httpFlags) checkTimes(bad func(string, ...any)) {
	if f.duration <= 0 {
		bad("--duration %v must be > 0", f.duration)
	}
	if f.timeout <= 0 {
		bad("--timeout %v must be > 0", f.timeout)
	}
	if f.grace < 0 {
		bad("--grace %v must be >= 0", f.grace)
	}
	if f.warmup < 0 || f.duration > 0 && f.warmup >= f.duration {
		bad("--warmup %v must be >= 0 and shorter than --duration %v", f.warmup, f.duration)
	}
}

// openOnly are the flags of the open model alone.
var openOnly = []string{"vus-min", "vus-max", "backlog", "dispatch-quantum"}

// model sets the load model from --rate or --concurrency.
func (f *httpFlags) model(w *engine.Workload, desc *results.Workload, given func(string) bool, bad func(string, ...any)) {
	conc := given("c") || given("concurrency")
	if f.rate != "" && conc {
		bad("give --rate (open model) or --concurrency (closed model), not both")
		return
	}
	if f.rate == "" {
		for _, name := range openOnly {
			if given(name) {
				bad("--%s applies to the open model (--rate)", name)
			}
		}
		if !conc {
			f.conc = 50
		}
		if f.conc < 1 {
			bad("--concurrency %d must be >= 1", f.conc)
			return
		}
		if why := run.ConnectionProblem(fmt.Sprintf("--concurrency %d", f.conc), f.conc); why != "" {
			bad("%s", why)
		}
		w.Model, w.Conc = engine.Closed, pacer.FixedConcurrency(f.conc, f.duration)
		desc.Model, desc.Concurrency = "closed", f.conc
		return
	}
	rate, err := units.ParseRate(f.rate)
	if err != nil || !(rate > 0) {
		bad("--rate %q: want a positive rate like 5000/s", f.rate)
	}
	lo, hi := f.vus(given, bad)
	if why := run.ConnectionProblem(fmt.Sprintf("--vus-max %d", hi), hi); why != "" {
		bad("%s", why)
	}
	if f.backlog < 0 {
		bad("--backlog %d must be >= 0", f.backlog)
	}
	if f.quantum <= 0 {
		bad("--dispatch-quantum %v: want a positive duration like 1ms (1ns sends each arrival on its own)", f.quantum)
	}
	w.Model, w.Rate = engine.Open, pacer.Constant(rate, f.duration)
	w.VUsMin, w.VUsMax, w.Backlog, w.Quantum = lo, hi, f.backlog, f.quantum
	desc.Model, desc.Rate, desc.VUsMin, desc.VUsMax, desc.Backlog = "open", rate, lo, hi, f.backlog
}

// vus are the open model's VUs, as a plan's vus: when only --vus-max is
// given, --vus-min is 10 or --vus-max if smaller; when only --vus-min is,
// --vus-max is 1000 or --vus-min if larger.
func (f *httpFlags) vus(given func(string) bool, bad func(string, ...any)) (lo, hi int) {
	lo, hi = f.vusMin, f.vusMax
	if !given("vus-min") {
		lo = min(lo, hi)
	}
	if !given("vus-max") {
		hi = max(hi, lo)
	}
	if hi < 1 {
		bad("--vus-max %d must be >= 1", hi)
	}
	switch {
	case lo < 0:
		bad("--vus-min %d must be >= 0", lo)
	case lo > hi && hi >= 1:
		bad("--vus-min %d is larger than --vus-max %d", lo, hi)
	}
	return lo, hi
}

// expandEnv replaces ${VAR} with the environment's value; an unset variable
// is an error, so a missing secret is caught before any load is sent.
func expandEnv(s string) (string, error) {
	var missing []string
	out := os.Expand(s, func(k string) string {
		v, ok := os.LookupEnv(k)
		if !ok {
			missing = append(missing, k)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
