// Package cli is perflab's command line, one file per command: it parses
// flags, checks a plan (internal/run), hands the job to run.Run (with a
// fleet.Coordinator as the load of a distributed run), renders the run's
// events on the terminal (events.go) and maps its result to a report on
// stdout, a hint and an exit code. It is the only package that touches
// flags, stdout, stderr and exit codes.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/term"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/sut"
)

// Version is perflab's version, printed by `perflab version` and stored in runs.
const Version = run.Version

// Exit codes.
const (
	ExitOK          = run.ExitOK
	ExitFailed      = run.ExitFailed      // the run ran but failed: target unreachable, all requests failed, store errors
	ExitUsage       = run.ExitUsage       // invalid arguments or plan; nothing was started
	ExitInterrupted = run.ExitInterrupted // interrupted by a signal
)

// env is what every subcommand writes to.
type env struct {
	stdout io.Writer
	stderr io.Writer
	tty    bool // stderr is a terminal: progress is drawn in place
	// width is the terminal's width (0 when unknown): the progress line is
	// cut to it; noEscapes draws it without ANSI escape codes (TERM=dumb
	// or NO_COLOR set); quiet (--quiet) shows no progress, notes or the
	// lines saying where the run's files are: warnings and errors alone.
	width     int
	noEscapes bool
	quiet     bool
	scrub     *secret.Scrubber // the run's, once known (useScrubber); nil scrubs nothing
	// intervals, when set, is where a run writes its intervals instead of
	// its store: tests put a failing writer there.
	intervals func(*results.Run) run.IntervalWriter
	// exe, when set, is the perflab binary: what local workers run and what
	// perflab k8s image packs (tests: the test binary is not perflab).
	exe string
	// k8sClient, when set, is the cluster `perflab k8s run` talks to
	// (tests: a fake clientset); else the kubeconfig's.
	k8sClient func(kubeconfig, context string) (k8s.Client, error)
	// export is perflab run's --export flags, sent to besides the plan's
	// own export block; nil for the commands without them.
	export *exportFlags
	// ci is what the run command writes for CI (--junit, --csv,
	// --run-dir); zero for the commands without them.
	ci ciFlags
}

const usage = `perflab — load tests that tell you how to size a service

New here? perflab demo runs a built-in target at four load levels and writes a report (about a minute).

Usage:
  perflab run PLAN.yaml [--profile NAME] [--repeat N] [--slo EXPR]… [--out DIR] [--workers N [--store URL]]
                                           run a plan: start its components, sweep its matrix, run its profiles
                                           (every cell N times, interleaved, for intervals across runs;
                                           the load made by N worker processes, merged into one run)
                                           for CI (run, http, llm, search, demo): --junit FILE --csv FILE --run-dir DIR --json
  perflab worker [--store URL] [--run-id ID] [--index I] [--workers N] [--plan FILE]
                                           one worker of a distributed run (started by perflab run --workers
                                           or as a Kubernetes Indexed Job; flags default to PERFLAB_STORE,
                                           PERFLAB_RUN_ID, JOB_COMPLETION_INDEX, PERFLAB_WORKERS)
  perflab merge --store URL --run-id ID [--out DIR]
                                           rebuild a distributed run's directory from its shared store alone
  perflab k8s manifest PLAN.yaml --workers N --image IMG --store s3://… [--namespace NS] [--secret NAME] …
                                           the Kubernetes objects of a distributed run, as YAML
  perflab k8s run PLAN.yaml --workers N --image IMG --store s3://… [--kubeconfig PATH] [--context C] [--keep]
                                           run a plan with its load made by an Indexed Job of N workers
  perflab k8s image --out FILE | --push REF [--tag perflab:VERSION] [--insecure]
                                           the image of this perflab binary: an OCI archive to import into a
                                           cluster's nodes (kind, k3d, ctr), or pushed to a registry
  perflab search PLAN.yaml --slo EXPR [--profile NAME] [--start 100/s] [--max 100000/s] [--step-duration 20s]
                                           find the highest rate of the profile's workload that meets the SLO
  perflab plan check PLAN.yaml             validate a plan (every problem at file:line:col) without running it
  perflab demo [--out DIR | --run-dir DIR] [--duration 11s]
                                           start here: the built-in target at four load levels (250, 500, 750
                                           and 1000 requests/s, profiles small to xlarge), a report and sizes
  perflab http URL [flags]                 one-off HTTP load test (perflab http --help)
  perflab llm URL --model M [--rate 5/s] [--isl 200] [--osl 50] [--stream] [flags]
                                           one-off load of an OpenAI-compatible API (perflab llm --help)
  perflab target http [flags]              serve the built-in HTTP target on loopback
  perflab target llm [flags]               serve the built-in OpenAI-compatible mock provider
  perflab target gateway --upstream URL [--delay D]
                                           serve the built-in gateway: a reverse proxy adding a fixed delay
  perflab report RUN_DIR [--format md|html|json|csv|junit] [--write]
                                           render the report of a finished, killed or running run to stdout
                                           (--write: write its report files into RUN_DIR again)
  perflab size RUN_DIR [--strategy p99|vpa|krr] [--headroom 25%] [--limit-factor 1.5] [--at LOAD]
  perflab size RUN_DIR --verify [--size NAME|all]  run each size's load again inside its limits: does it hold?
                                           suggested sizes of a run with other settings, or predicted at a load
  perflab compare RUN_A RUN_B [--force] [--format md|json]
  perflab compare --a RUN --a RUN --b RUN --b RUN
                                           B against A on the same workloads: "B uses x1.7 less CPU", or ~
                                           (a run's repetitions count as repeated runs)
  perflab version                          the release, commit, commit date and Go version of this binary
  perflab completion bash|zsh|fish         a shell completion script (perflab completion --help)
  perflab help [COMMAND]                   this text, or a command's flags (as perflab COMMAND --help)

Flags go before or after the arguments; every command takes --help (on stdout, exit 0).
Exit codes: 0 ok, 1 the run failed or missed its SLO, 2 invalid arguments or plan (nothing started), 130 interrupted.
`

// Main runs perflab with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if msg := linuxOnly(runtime.GOOS); msg != "" {
		fmt.Fprintln(stderr, msg)
		return ExitUsage
	}
	if len(args) > 0 && args[0] == sut.SupervisorArg { // perflab run again by sut.Start
		code, err := sut.Supervise()
		if err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
		}
		return code
	}
	e := &env{stdout: stdout, stderr: stderr}
	if f, ok := stderr.(*os.File); ok {
		e.tty = term.IsTerminal(int(f.Fd()))
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && e.tty {
			e.width = w
		}
	}
	e.noEscapes = noEscapes(os.Getenv)
	if len(args) > 0 && (args[0] == "--quiet" || args[0] == "-q") { // perflab --quiet run …
		e.quiet, args = true, args[1:]
	}
	return e.main(ctx, args)
}

// noEscapes reports whether the environment getenv reads asks for no
// ANSI escape codes: a dumb terminal (TERM=dumb), or NO_COLOR set to
// anything (no-color.org).
func noEscapes(getenv func(string) string) bool {
	return getenv("TERM") == "dumb" || getenv("NO_COLOR") != ""
}

// main runs the subcommand args name and returns the exit code.
func (e *env) main(ctx context.Context, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	defer startProfile(stderr)()
	var err error
	switch args[0] {
	case "run":
		err = e.runPlan(ctx, args[1:])
	case "plan":
		err = e.planCmd(args[1:])
	case "worker":
		err = e.workerCmd(ctx, args[1:])
	case "merge":
		err = e.mergeCmd(ctx, args[1:])
	case "k8s":
		err = e.k8sCmd(ctx, args[1:])
	case "search":
		err = e.search(ctx, args[1:])
	case "demo":
		err = e.demo(ctx, args[1:])
	case "http":
		err = e.httpCmd(ctx, args[1:])
	case "llm":
		err = e.llmCmd(ctx, args[1:])
	case "target":
		err = e.target(ctx, args[1:])
	case "report":
		err = e.report(args[1:])
	case "size":
		err = e.size(ctx, args[1:])
	case "compare":
		err = e.compare(args[1:])
	case "version", "--version":
		err = e.version(args[1:])
	case "completion":
		err = e.completion(args[1:])
	case "__flags": // the completion scripts' question
		return e.flagsCmd(ctx, args[1:])
	case "help", "-h", "--help":
		if len(args) > 1 && !isHelp(args[1]) { // perflab help http: perflab http --help
			return e.main(ctx, append(append([]string{}, args[1:]...), "--help"))
		}
		fmt.Fprint(stdout, usage)
	default:
		err = usageErrorf("unknown command %q", args[0])
	}
	return e.exit(err)
}

// perflabExe is the perflab binary: e.exe, else this process's.
func (e *env) perflabExe() (string, error) {
	if e.exe != "" {
		return e.exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", &runError{err: fmt.Errorf("cannot find perflab's own executable: %w", err), code: ExitFailed}
	}
	return exe, nil
}

// usageError is an invalid invocation: nothing was started. see, when
// set, is where to read how to invoke it: "perflab http --help".
type usageError struct{ msg, see string }

func (u *usageError) Error() string { return u.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// runError is a run that happened but failed; hint says what to do.
type runError struct {
	err  error
	hint string
	code int
}

func (r *runError) Error() string { return r.err.Error() }
func (r *runError) Unwrap() error { return r.err }

func (e *env) exit(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ue *usageError
	var f *run.Failure
	switch {
	case errors.As(err, &ue) && ue.see != "":
		fmt.Fprintf(e.stderr, "perflab: %s (see %s)\n", ue.msg, ue.see)
		return ExitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "perflab: %s\nRun 'perflab help' for usage.\n", ue.msg)
		return ExitUsage
	case errors.As(err, &f):
		return e.failure(f)
	}
	fmt.Fprintf(e.stderr, "perflab: %s\n", err)
	var re *runError
	if errors.As(err, &re) {
		if re.hint != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", re.hint)
		}
		return re.code
	}
	return ExitFailed
}

// failure shows a run's failure: what else went wrong first, then the
// error and its hint. A job refused without a hint is a usage error.
func (e *env) failure(f *run.Failure) int {
	for _, err := range f.Also {
		fmt.Fprintf(e.stderr, "perflab: also: %v\n", err)
	}
	if f.Code == ExitUsage && f.Hint == "" {
		fmt.Fprintf(e.stderr, "perflab: %s\nRun 'perflab help' for usage.\n", f.Err)
		return f.Code
	}
	fmt.Fprintf(e.stderr, "perflab: %s\n", f.Err)
	if f.Hint != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", f.Hint)
	}
	return f.Code
}

// signals returns two contexts: stop ends with the first SIGINT or SIGTERM
// (stop issuing load, finish the report), kill with the second (cancel
// in-flight operations at once).
func (e *env) signals(ctx context.Context) (stop, kill context.Context, release func()) {
	kill, cancelKill := context.WithCancel(ctx)
	stop, cancelStop := context.WithCancel(kill)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			fmt.Fprintln(e.stderr, "\nperflab: stopping: no new requests; in-flight ones get their grace period (interrupt again to stop at once)")
			cancelStop()
		case <-done:
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(e.stderr, "\nperflab: stopping at once; writing what was measured")
			cancelKill()
		case <-done:
		}
	}()
	return stop, kill, func() {
		signal.Stop(ch)
		close(done)
		cancelStop()
		cancelKill()
	}
}
