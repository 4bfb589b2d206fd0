package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/fleet/worker"
	"github.com/perflab/perflab/internal/shard"
)

// workerCmd is `perflab worker`: one worker of a distributed run. It
// registers in the shared store, runs its share of every phase the
// coordinator announces from the instant it names, writes its intervals
// and its end to the store, and exits when the coordinator says the run is
// done or aborted. It starts no component and observes nothing but itself.
func (e *env) workerCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("worker", e)
	storeURL := fs.String("store", "", "the shared store: s3://BUCKET/PREFIX?endpoint=URL or a directory (default $PERFLAB_STORE)")
	runID := fs.String("run-id", "", "the run's id in the store (default $PERFLAB_RUN_ID)")
	index := fs.Int("index", -1, "this worker's index, from 0 (default $JOB_COMPLETION_INDEX)")
	workers := fs.Int("workers", 0, "how many workers the run has (default $PERFLAB_WORKERS, else the coordinator's manifest)")
	planPath := fs.String("plan", "", "the plan file (default: the plan text the coordinator stored; the files it names must then be absolute)")
	wait := fs.Duration("wait", time.Hour, "give up when the coordinator says nothing new for this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab worker --store URL --run-id ID [--index I] [--workers N] [--plan FILE] [--wait 1h]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) > 0 {
		return usageErrorf("perflab worker takes no arguments, got %q", pos)
	}
	*storeURL, *runID = orEnv(*storeURL, "PERFLAB_STORE"), orEnv(*runID, "PERFLAB_RUN_ID")
	var problems []string
	if *index < 0 {
		*index, problems = envInt("JOB_COMPLETION_INDEX", "--index", problems)
	}
	if *workers == 0 && os.Getenv("PERFLAB_WORKERS") != "" {
		*workers, problems = envInt("PERFLAB_WORKERS", "--workers", problems)
	}
	problems = append(problems, workerProblems(*storeURL, *runID, *index, *workers, *wait)...)
	if len(problems) > 0 {
		return usageErrorf("perflab worker: %s", strings.Join(problems, "; "))
	}
	store, err := shard.Open(*storeURL)
	if err != nil {
		return usageErrorf("%v", err)
	}
	stop, kill, release := e.signals(ctx)
	defer release()
	w := worker.New(shard.Run{Store: store, ID: *runID}, *index, *workers, stop, kill, *wait, e.events())
	if err := w.Join(*planPath); err != nil {
		return err
	}
	e.useScrubber(w.Scrubber())
	return w.Loop()
}

// orEnv is v, or the environment variable name when v is empty.
func orEnv(v, name string) string {
	if v == "" {
		return os.Getenv(name)
	}
	return v
}

// envInt reads a whole number from the environment variable name, which
// stands in for flag; a problem is added when it is missing or invalid.
func envInt(name, flag string, problems []string) (int, []string) {
	v := os.Getenv(name)
	if v == "" {
		return -1, append(problems, fmt.Sprintf("give %s or set %s", flag, name))
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1, append(problems, fmt.Sprintf("%s=%q is not a whole number", name, v))
	}
	return n, problems
}

func workerProblems(store, runID string, index, workers int, wait time.Duration) []string {
	var out []string
	if store == "" {
		out = append(out, "give --store or set PERFLAB_STORE")
	}
	if runID == "" {
		out = append(out, "give --run-id or set PERFLAB_RUN_ID")
	}
	if workers < 0 {
		out = append(out, fmt.Sprintf("--workers %d must be >= 1", workers))
	}
	if workers > 0 && index >= workers {
		out = append(out, fmt.Sprintf("index %d is not one of the %d workers (0 to %d)", index, workers, workers-1))
	}
	if wait <= 0 {
		out = append(out, fmt.Sprintf("--wait %v must be > 0", wait))
	}
	return out
}
