package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/units"
)

// target serves a built-in target until interrupted.
func (e *env) target(ctx context.Context, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		return e.groupHelp("target", "http")
	}
	if len(args) > 0 && args[0] == "llm" {
		return e.targetLLM(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "gateway" {
		return e.targetGateway(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "http" {
		return usageErrorf("perflab target needs a kind: perflab target http|llm|gateway [flags]")
	}
	fs := newFlagSet("target http", e)
	addr := fs.String("addr", "127.0.0.1:8080", "loopback address to listen on (127.0.0.1:0 picks a free port)")
	latency := fs.Duration("latency", 0, "base response latency")
	jitter := fs.Duration("jitter", 0, "latency spread (uniform ± or normal stddev)")
	dist := fs.String("dist", "", "latency distribution: fixed, uniform or normal (default: fixed without jitter, normal with)")
	size := fs.String("size", "1KiB", "response body size")
	errRate := fs.Float64("error-rate", 0, "fraction of requests answered 500, 0..1")
	stall := fs.String("stall", "", "periodic stall FOR/EVERY, e.g. 1s/10s: responses are held FOR at the end of each EVERY")
	seed := fs.Int64("seed", 0, "random seed (0: random)")
	ballast := fs.String("ballast", "0", "hold a never-touched heap allocation of this size, e.g. 1GiB (the GC ballast trick)")
	resident := fs.String("resident", "0", "hold this much memory, written once so that it is resident, e.g. 128MiB: a known memory cost")
	var cpuWork time.Duration
	fs.Func("cpu-work", "CPU time each request burns before its latency, e.g. 1ms: a known cost per request (default 0)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration of 0 or more, like 1ms")
		}
		cpuWork = d
		return nil
	})
	capacity := fs.String("capacity", "", "serve at most this many requests per second, in turn, e.g. 500/s; beyond, requests queue (default: unlimited)")
	queueMax := fs.Duration("queue-max", 0, "with --capacity: a request that would queue longer than this is answered 503 at once (default 1s)")
	if err := fs.Parse(args[1:]); err != nil {
		return e.flagError(fs, err)
	}
	cfg, err := targetConfig(*latency, *jitter, *dist, *size, *errRate, *stall, *seed, [2]string{*ballast, *resident})
	cfg.CPUWork = cpuWork
	if err == nil {
		err = capacityConfig(&cfg, *capacity, *queueMax)
	}
	if err != nil {
		return err
	}
	ln, err := builtin.ListenLoopback(*addr)
	if err != nil {
		return usageErrorf("%v", err)
	}
	stop, _, release := e.signals(ctx)
	defer release()
	fmt.Fprintf(e.stdout, "perflab target http listening on http://%s\n", ln.Addr())
	return builtin.Serve(stop, ln, builtin.NewHTTP(cfg, time.Now))
}

// targetConfig is the target's configuration from its flags; memory is
// --ballast and --resident.
func targetConfig(latency, jitter time.Duration, dist, size string, errRate float64, stall string, seed int64, memory [2]string) (builtin.HTTPConfig, error) {
	var problems []string
	cfg := builtin.HTTPConfig{Latency: latency, Jitter: jitter, Dist: dist, ErrorRate: errRate, Seed: seed}
	n, err := units.ParseBytes(size)
	if err != nil {
		problems = append(problems, err.Error())
	}
	cfg.Size = n
	if cfg.Ballast, err = units.ParseBytes(memory[0]); err != nil {
		problems = append(problems, "--ballast: "+err.Error())
	}
	if cfg.Resident, err = units.ParseBytes(memory[1]); err != nil {
		problems = append(problems, "--resident: "+err.Error())
	}
	cfg.StallFor, cfg.StallEvery, err = builtin.ParseStall(stall)
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, err := range cfg.Validate() {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return cfg, usageErrorf("invalid target:\n  %s", strings.Join(problems, "\n  "))
	}
	return cfg, nil
}

// capacityConfig sets the capacity limit of cfg from --capacity and
// --queue-max.
func capacityConfig(cfg *builtin.HTTPConfig, capacity string, queueMax time.Duration) error {
	if capacity != "" {
		r, err := units.ParseRate(capacity)
		if err != nil || r <= 0 {
			return usageErrorf("--capacity %q: want a rate like 500/s", capacity)
		}
		cfg.Capacity = r
	}
	cfg.QueueMax = queueMax
	var problems []string
	for _, err := range cfg.Validate() {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return usageErrorf("invalid target:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}
