package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	httpdriver "github.com/perflab/perflab/internal/driver/http"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
)

// listFlag is a repeatable string flag: -H, --slo, compare's --a and --b.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type httpFlags struct {
	loadFlags
	body, bodyFile, proto, cacert, expectStatus, method string
	followRedirects                                     int
	timeout                                             time.Duration
	insecure                                            bool
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	f.loadFlags.register(fs, loadCommand{name: httpWorkload, duration: 10 * time.Second, rate: "arrival rate, e.g. 5000/s",
		conc: "number of concurrent VUs", vusMax: "most VUs", quantum: quantumUsage + "; finer than 1ms and without --backlog, VUs that finish also take due arrivals (250us: lag near 40µs, about twice the CPU)"})
	fs.StringVar(&f.method, "m", "GET", "HTTP method")
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

func (e *env) httpCmd(ctx context.Context, args []string) error {
	var f httpFlags
	fs := newFlagSet("http", e)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab http URL [--rate 5000/s | --concurrency 64] [--duration 30s] [-m METHOD] [-H 'K: V'] [-d BODY | --body-file F] [--timeout 5s] [--json] [--out DIR | --run-dir DIR] [--junit FILE] [--csv FILE] [--export KIND=URL]…")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\n"+httpdriver.RulesText())
	}
	return e.runImplicit(ctx, fs, args, implicitRun{cmd: "http", needs: "exactly one URL", out: &f.out, name: &f.name, slo: &f.slo,
		jsonOut: &f.jsonOut, export: &f.export, ci: &f.ci, plan: f.checkedPlan, scrubber: f.scrubber})
}

// implicitRun is a command whose flags make a plan of one workload
// (perflab http, perflab llm): where its flags are, and how it makes and
// checks its plan from its one argument, the URL.
type implicitRun struct {
	cmd, needs string // "http"; what its one argument is: "exactly one URL"
	out, name  *string
	slo        *listFlag
	jsonOut    *bool
	export     *exportFlags
	ci         *ciFlags
	plan       func(rawURL string, given func(string) bool) (*plan.Plan, plan.Builtins, error)
	scrubber   func(rawURL string) *secret.Scrubber
}

// runImplicit parses args into fs, makes the command's plan and runs it
// as perflab run runs a plan file.
func (e *env) runImplicit(ctx context.Context, fs *flag.FlagSet, args []string, r implicitRun) error {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab %s needs %s, got %d arguments", r.cmd, r.needs, len(pos))
	}
	if err := r.ci.check(set(fs, "out")); err != nil {
		return err
	}
	e.ci = *r.ci
	e.ci.name = *r.name
	p, b, err := r.plan(pos[0], func(name string) bool { return set(fs, name) })
	if err != nil {
		return err
	}
	targets, err := r.export.build()
	if err != nil {
		return err
	}
	e.useScrubber(r.scrubber(pos[0]))
	job := e.job(*r.out, results.Meta{Name: *r.name, Command: recordedCommand(append([]string{"perflab", r.cmd}, args...)),
		Extra: readback.WithSLO(nil, run.GateSpecs(p, *r.slo))})
	job.Plan, job.Builtins, job.SampleEvery, job.Export = p, b, p.SampleInterval, targets
	return e.runJob(ctx, job, *r.jsonOut)
}

// sampleEveryFor is how often perflab http samples the generator over a
// load of duration d: a twelfth of the steady-state window (what is left
// after the warm-up, or after the first second), between 100 ms and 1 s,
// so that the window holds the samples a P99 of its CPU needs.
func sampleEveryFor(d, warmup time.Duration) time.Duration {
	every := (d - max(warmup, time.Second)) / 12
	return min(max(every.Truncate(10*time.Millisecond), 100*time.Millisecond), time.Second)
}

// checkedPlan is the plan of the flags, checked as perflab run checks a
// plan file (run.CheckBuilt, the --slo scopes, the open-file limit), and
// its built-in values; given tells the flags given on the command line.
// Every problem is listed at once, each naming its flag; nothing is
// started.
func (f *httpFlags) checkedPlan(rawURL string, given func(string) bool) (*plan.Plan, plan.Builtins, error) {
	return checkImplicit("http", httpWorkload, f.out, f.slo, func(bad func(string, ...any)) (*plan.Plan, error) {
		return f.plan(rawURL, given, bad)
	})
}

// checkImplicit makes the implicit plan of command cmd (one workload,
// named workload) with makePlan and checks it as perflab run checks a
// plan file; out is the parent of its run directory, slo its --slo gates.
func checkImplicit(cmd, workload, out string, slo listFlag, makePlan func(bad func(string, ...any)) (*plan.Plan, error)) (*plan.Plan, plan.Builtins, error) {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	p, err := makePlan(bad)
	if err != nil {
		return nil, plan.Builtins{}, &runError{err: err, code: ExitFailed}
	}
	b, err := run.Builtins(filepath.Join(out, "RUN_DIR"))
	if err != nil {
		return nil, b, &runError{err: err, code: ExitFailed}
	}
	for _, err := range run.CheckBuilt(p, b) {
		bad("%v", err)
	}
	problems = append(problems, sloProblems(slo)...)
	unknown, _ := run.UnknownSLOWorkloads(p, slo)
	for _, g := range unknown {
		bad("--slo '%s': perflab %s runs one workload, %q, not %q", g.Expr, cmd, workload, g.Workload)
	}
	for _, err := range run.OpenFileProblems(p, 1) {
		bad("%v", err)
	}
	if len(problems) > 0 {
		return nil, b, usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	return p, b, nil
}

// httpWorkload names perflab http's workload, and its implicit profile.
const httpWorkload = "http"

// defaultConcurrency is the closed model's VUs without --concurrency.
const defaultConcurrency = 50

// plan is the implicit plan of the flags: one workload of the http
// driver, each value at the flag that gave it, so that a problem the
// plan's checks find names the flag. bad gets what is wrong with the
// flags' own syntax, which the plan format does not share.
func (f *httpFlags) plan(rawURL string, given func(string) bool, bad func(string, ...any)) (*plan.Plan, error) {
	return f.implicitPlan(httpWorkload, "http", f.params(rawURL, bad), given, bad)
}

// params are the http driver's params of the flags, as a plan gives them.
func (f *httpFlags) params(rawURL string, bad func(string, ...any)) []plan.Param {
	ps := []plan.Param{{Key: "url", Value: rawURL}, {Key: "method", Value: strings.ToUpper(f.method), Flag: "-m"}}
	if h := f.header(bad); len(h) > 0 {
		ps = append(ps, plan.Param{Key: "headers", Value: h, Flag: "-H"})
	}
	if f.body != "" {
		ps = append(ps, plan.Param{Key: "body", Value: f.body, Flag: "-d"})
	}
	if f.bodyFile != "" {
		ps = append(ps, plan.Param{Key: "body_file", Value: f.bodyFile, Flag: "--body-file"})
	}
	if f.timeout > 0 { // to the driver, 0 is its default
		ps = append(ps, plan.Param{Key: "timeout", Value: f.timeout.String(), Flag: "--timeout"})
	} else {
		bad("--timeout %v must be > 0", f.timeout)
	}
	ps = append(ps, plan.Param{Key: "proto", Value: f.proto, Flag: "--proto"},
		plan.Param{Key: "expect_status", Value: f.expectStatus, Flag: "--expect-status"},
		plan.Param{Key: "follow_redirects", Value: f.followRedirects, Flag: "--follow-redirects"})
	if f.cacert != "" {
		ps = append(ps, plan.Param{Key: "ca_file", Value: f.cacert, Flag: "--cacert"})
	}
	if f.insecure {
		ps = append(ps, plan.Param{Key: "insecure", Value: true, Flag: "--insecure"})
	}
	return ps
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
