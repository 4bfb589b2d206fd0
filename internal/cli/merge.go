package cli

import (
	"context"
	"fmt"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/view"
)

// mergeCmd is `perflab merge --store URL --run-id ID [--out DIR]`: it
// rebuilds the run directory of a distributed run from its shared store
// alone (when the coordinator died, or to check it), with the merge the
// coordinator does as the run goes: every phase's workloads, their
// intervals merged by index, their ends added up, the workers' facts,
// checks and rows. It exits 1 when a worker failed or never ended.
func (e *env) mergeCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("merge", e)
	storeURL := fs.String("store", "", "the shared store: s3://BUCKET/PREFIX?endpoint=URL or a directory (default $PERFLAB_STORE)")
	runID := fs.String("run-id", "", "the run's id in the store (default $PERFLAB_RUN_ID)")
	out := fs.String("out", "perflab-runs", "parent directory for the run directory")
	jsonOut := fs.Bool("json", false, "print the JSON summary to stdout instead of the tables")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab merge --store URL --run-id ID [--out DIR] [--json]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	*storeURL, *runID = orEnv(*storeURL, "PERFLAB_STORE"), orEnv(*runID, "PERFLAB_RUN_ID")
	switch {
	case len(pos) > 0:
		return usageErrorf("perflab merge takes no arguments, got %q", pos)
	case *storeURL == "" || *runID == "":
		return usageErrorf("perflab merge needs --store and --run-id (or PERFLAB_STORE and PERFLAB_RUN_ID)")
	}
	store, err := shard.Open(*storeURL)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sr := shard.Run{Store: store, ID: *runID}
	m, found, err := sr.Manifest(ctx)
	if err == nil && !found {
		err = fmt.Errorf("no run %s in %s", sr.ID, store.Where())
	}
	if err != nil {
		return &runError{err: err, hint: "the run id is the one perflab printed when the run started (perflab: run r…)", code: ExitFailed}
	}
	rec, err := run.Create(*out, results.Meta{Name: m.Name, Command: recordedCommand(append([]string{"perflab", "merge"}, args...)),
		Repeat: m.Repeat, Extra: m.Meta}, e.scrubFunc(), e.events())
	if err != nil {
		return err
	}
	defer rec.Store.Close()
	failed, err := fleet.Merge(ctx, rec, sr, m.Workers)
	if err != nil {
		rec.Fail(err)
	}
	res, err := rec.Finish(func(rep *view.Run) (results.Status, error) {
		return run.JudgePlan(rep, false, rec.Err(), failed)
	}, nil, report.WriteFiles)
	return e.show(res, *jsonOut, err)
}
