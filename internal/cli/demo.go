package cli

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/run"
)

// demoPlan is the plan perflab demo runs: the built-in HTTP target (10 ms
// ± 2 ms, 1 KiB responses, 0.2 % errors) started on a loopback port and
// driven by one workload at four rates, one profile (a t-shirt size) each, so that the report has what a plan
// run has — sizes per profile, the scaling of the target's CPU and memory
// with the load, Kubernetes resources — from one command. %[1]s is the
// target's address, %[2]s each profile's duration, %[3]s the sample
// interval.
const demoPlan = `name: demo
description: the built-in HTTP target at four open-model rates
sample_interval: %[3]s
components:
  - name: target
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "%[1]s", --latency, 10ms, --jitter, 2ms, --size, 1KiB, --error-rate, "0.002"]
      ready: {http: "http://%[1]s/health"}
    metrics: http://%[1]s/metrics
profiles:
  - name: small
    duration: %[2]s
    workloads:
      - {name: get, driver: http, rate: 250/s, vus: {min: 5, max: 200}, params: {url: "http://%[1]s/", timeout: 5s}}
  - name: medium
    duration: %[2]s
    workloads:
      - {name: get, driver: http, rate: 500/s, vus: {min: 10, max: 300}, params: {url: "http://%[1]s/", timeout: 5s}}
  - name: large
    duration: %[2]s
    workloads:
      - {name: get, driver: http, rate: 750/s, vus: {min: 15, max: 400}, params: {url: "http://%[1]s/", timeout: 5s}}
  - name: xlarge
    duration: %[2]s
    workloads:
      - {name: get, driver: http, rate: 1000/s, vus: {min: 20, max: 500}, params: {url: "http://%[1]s/", timeout: 5s}}
`

// demo runs demoPlan: the built-in HTTP target as a component on a free
// loopback port, loaded at four rates, with the report of perflab run.
func (e *env) demo(ctx context.Context, args []string) error {
	fs := newFlagSet("demo", e)
	out := fs.String("out", "perflab-runs", "parent directory for the run directory")
	each := fs.Duration("duration", 11*time.Second, "duration of each load level (11 s: ten 1 s samples after the first interval, enough for a P99 of the target's resources)")
	e.ci.register(fs)
	if err := fs.Parse(args); err != nil {
		return e.flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("perflab demo takes no arguments, got %q", fs.Args())
	}
	if err := e.ci.check(set(fs, "out")); err != nil {
		return err
	}
	e.ci.name = "demo"
	if *each < time.Second {
		return usageErrorf("--duration %v: want 1s or more (each load level is at least one interval)", *each)
	}
	every := time.Second
	if *each < 10*time.Second {
		every = 500 * time.Millisecond
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	p, err := plan.Parse("perflab demo", []byte(fmt.Sprintf(demoPlan, addr, *each, every)))
	if err != nil {
		return fmt.Errorf("the demo's own plan: %w", err)
	}
	runDir := e.ci.runDir
	if runDir == "" {
		runDir = filepath.Join(*out, "RUN_DIR")
	}
	b, err := run.Builtins(runDir)
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if problems := run.Check(p, b); len(problems) > 0 {
		return fmt.Errorf("the demo's own plan: %w", run.InvalidPlan(problems))
	}
	fmt.Fprintf(e.stderr, "demo: the built-in target at http://%s, 250/s, 500/s, 750/s and 1000/s for %v each\n", addr, *each)
	return e.executePlan(ctx, p, b, *out, false, recordedCommand(append([]string{"perflab", "demo"}, args...)), nil, nil)
}

// freeLoopbackAddr is a 127.0.0.1 address with a port the kernel has just
// given out and taken back, for a component that must be told its port.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot find a free port on 127.0.0.1 for the demo target: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return strings.TrimSpace(addr), nil
}
