package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/stats"
)

// writeShard writes, as worker w would, n intervals of perSec operations
// each of phase 0, and its end unless lost.
func writeShard(t *testing.T, run shard.Run, w int, at time.Time, n, perSec int, lost bool) {
	t.Helper()
	up := shard.NewUploader(run, 0, w)
	rec := stats.NewRecorder(1, at)
	for k := range n {
		from := at.Add(time.Duration(k) * time.Second)
		for i := range perSec {
			start := from.Add(time.Duration(i) * time.Millisecond)
			rec.Record(0, &stats.Sample{Op: "GET /", Intended: start, Start: start, End: start.Add(5 * time.Millisecond)})
		}
		up.Interval("low/get", rec.Flush(from.Add(time.Second)))
		if err := up.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if lost {
		return
	}
	end := at.Add(time.Duration(n) * time.Second)
	d, _ := json.Marshal(shard.Detail{Host: "host-" + string(rune('a'+w)), Workloads: []shard.WorkloadEnd{{Name: "low/get", Start: at,
		LoadEnd: end, End: end, Scheduled: uint64(n * perSec), MaxVUs: 1, WindowStart: at.Add(time.Second), WindowEnd: end,
		WindowRule: "schedule after the first interval, to the end of load"}}})
	if err := up.Finish(context.Background(), shard.End{Detail: d}); err != nil {
		t.Fatal(err)
	}
}

// TestMergeRebuildsTheRunAndNamesALostWorker: a store where workers 0 and
// 2 ended and worker 1 stopped writing after two intervals merges into a
// run with every operation any worker recorded, the workers' rows, and a
// failed state naming worker 1: exit 1.
func TestMergeRebuildsTheRunAndNamesALostWorker(t *testing.T) {
	dir := t.TempDir()
	store, err := shard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := shard.Run{Store: store, ID: "r1"}
	ctx := context.Background()
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	desc, _ := json.Marshal(results.Workload{Name: "low/get", Short: "get", Profile: "low", Driver: "http", Model: results.ModelOpen,
		Target: "GET http://127.0.0.1:1/", Rate: 300, VUsMax: 100, Duration: 4 * time.Second})
	steps := []error{
		run.PutManifest(ctx, shard.Manifest{Workers: 3, Name: "merged", Created: at}),
		run.Announce(ctx, shard.Announcement{Phase: 0, CellName: "default", Profile: "low", StartAt: at,
			Workloads: map[string]shard.Resolved{"get": {Name: "low/get", Detail: desc}}}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	writeShard(t, run, 0, at, 4, 100, false)
	writeShard(t, run, 1, at, 2, 100, true)
	writeShard(t, run, 2, at, 4, 100, false)
	var out, errOut strings.Builder
	outDir := t.TempDir()
	code := Main(ctx, []string{"merge", "--store", dir, "--run-id", "r1", "--out", outDir}, &out, &errOut)
	if code != ExitFailed || !strings.Contains(errOut.String(), "worker 1: never wrote its end (2 parts read)") {
		t.Fatalf("exit %d, want 1 naming worker 1:\n%s", code, errOut.String())
	}
	rs := openOnlyRun(t, outDir)
	var total int64
	for _, iv := range intervalsOf(t, rs, "low/get") {
		total += iv.Ops["GET /"].Classes.Total()
	}
	if total != 1000 {
		t.Errorf("the merged run holds %d operations, want the 1000 the workers wrote", total)
	}
	shards, err := rs.Shards()
	if err != nil || len(shards) != 3 || shards[1].State != results.ShardLost || shards[1].Requests != 200 ||
		shards[0].State != results.ShardCompleted || shards[0].Host != "host-a" {
		t.Errorf("shards %+v, %v", shards, err)
	}
	ends, _ := rs.WorkloadEnds()
	if ends["low/get"].Scheduled != 800 {
		t.Errorf("scheduled %d, want the two ended workers' 800", ends["low/get"].Scheduled)
	}
}

// openOnlyRun opens the one run directory under out, read-only.
func openOnlyRun(t *testing.T, out string) *results.Run {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s holds %d entries, want one run directory (%v)", out, len(entries), err)
	}
	rs, err := results.OpenReadOnly(filepath.Join(out, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	return rs
}

func intervalsOf(t *testing.T, rs *results.Run, workload string) []*stats.Interval {
	t.Helper()
	ivs, err := rs.Intervals(workload)
	if err != nil {
		t.Fatal(err)
	}
	return ivs
}
