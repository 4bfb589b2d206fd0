package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	httpdriver "github.com/perflab/perflab/internal/driver/http"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/results"
)

// The demo target: 10 ms ± 2 ms, 1 KiB responses, 0.2 % errors.
var demoTarget = []string{"--latency", "10ms", "--jitter", "2ms", "--size", "1KiB", "--error-rate", "0.002"}

// demo starts the built-in HTTP target as a child process on loopback and
// drives it at two load levels.
func (e *env) demo(ctx context.Context, args []string) error {
	fs := newFlagSet("demo", e)
	out := fs.String("out", "perflab-runs", "parent directory for the run directory")
	each := fs.Duration("duration", 11*time.Second, "duration of each load level (11 s: ten 1 s samples after the first interval, enough for a P99 of the target's resources)")
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if *each <= 0 {
		return usageErrorf("--duration %v must be > 0", *each)
	}
	url, pid, stopTarget, err := startTarget(ctx, e.stderr)
	if err != nil {
		return &runError{err: err, hint: "the demo runs `perflab target http` as a child process; try it by hand to see why it fails", code: ExitFailed}
	}
	defer stopTarget()
	fmt.Fprintf(e.stderr, "demo target (%s) at %s\n", strings.Join(demoTarget, " "), url)
	var ws []plannedWorkload
	for _, lvl := range []struct {
		name           string
		rate           float64
		vusMin, vusMax int
	}{{"low", 200, 5, 200}, {"high", 1000, 20, 500}} {
		d, err := httpdriver.New(httpdriver.Config{URL: url, Method: "GET", Timeout: 5 * time.Second, Proto: "auto"})
		if err != nil {
			return err
		}
		params, _ := json.Marshal(map[string]any{"method": "GET", "target_args": demoTarget})
		ws = append(ws, plannedWorkload{
			eng: engine.Workload{Name: lvl.name, Model: engine.Open, Rate: pacer.Constant(lvl.rate, *each),
				VUsMin: lvl.vusMin, VUsMax: lvl.vusMax, Grace: 5 * time.Second, Driver: d},
			desc: results.Workload{Name: lvl.name, Driver: "http", Model: "open", Target: "GET " + url, Rate: lvl.rate,
				VUsMin: lvl.vusMin, VUsMax: lvl.vusMax, Duration: *each, Grace: 5 * time.Second, Params: params},
		})
	}
	// The target's CPU and memory (its process, and its own /metrics) and
	// perflab's own, sampled while the load runs.
	every := time.Second
	if *each < 10*time.Second {
		every = 500 * time.Millisecond
	}
	metrics := url + "/metrics"
	tgt := observed{comp: results.Component{Name: "target", Kind: results.KindRun, PID: pid, MetricsURL: metrics},
		sources: append(processSources(pid, ""), endpointSources(metrics, nil, nil, every)...)}
	return e.execute(ctx, job{name: "demo", command: "perflab demo " + strings.Join(args, " "), out: *out, workloads: ws,
		observed: []observed{tgt}, sampleEvery: every})
}

// startTarget runs `perflab target http` on a free loopback port and returns
// its URL once it listens, its pid, and a function that stops it.
func startTarget(ctx context.Context, logs io.Writer) (string, int, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", 0, nil, fmt.Errorf("cannot find perflab's own executable: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"target", "http", "--addr", "127.0.0.1:0"}, demoTarget...)...)
	var errs bytes.Buffer // the target's own messages, shown only if it fails to start
	cmd.Stderr = &errs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, fmt.Errorf("cannot start the demo target: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("cannot start the demo target: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		if i := strings.Index(l, "http://"); ok && i >= 0 {
			return strings.TrimSpace(l[i:]), cmd.Process.Pid, stop, nil
		}
		stop()
		fmt.Fprint(logs, errs.String())
		return "", 0, nil, errors.New("the demo target exited before it listened")
	case <-time.After(10 * time.Second):
		stop()
		return "", 0, nil, errors.New("the demo target did not listen within 10s")
	}
}
