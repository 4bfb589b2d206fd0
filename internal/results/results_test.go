package results

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

var testStart = time.Date(2026, 11, 21, 17, 24, 0, 123456789, time.UTC)

// testInterval builds interval idx with three operations: "GET /" with
// every histogram filled and two failure classes (whose latencies are in
// its failed histogram), "PUT /x" with empty TTFB
// and connect histograms, "chat" with the time to first token, inter-token
// latency and output tokens of streams (no time per output token, no prompt
// tokens). Odd intervals have an empty lag histogram.
func testInterval(idx int) *stats.Interval {
	start := testStart.Add(time.Duration(idx) * time.Second)
	iv := &stats.Interval{
		Index: idx, Start: start, End: start.Add(time.Second),
		Ops: map[string]*stats.OpStats{}, Dropped: int64(3 * idx), VUs: int64(10 + idx), Lag: stats.NewHist(),
	}
	if idx%2 == 0 {
		iv.Lag.Record(time.Duration(idx+1) * time.Millisecond)
	}
	get := stats.NewOpStats()
	for i := range 97 {
		d := time.Duration(i+1+7*idx) * 137 * time.Microsecond
		get.Latency.Record(d)
		get.Service.Record(d * 9 / 10)
		get.TTFB.Record(d / 2)
	}
	get.Failed = stats.NewHist()
	for i := range 3 + idx {
		get.Failed.Record(time.Duration(i+1) * 51 * time.Microsecond)
	}
	get.Connect.Record(3 * time.Millisecond)
	get.Classes[stats.OK] = 97
	get.Classes[stats.Timeout] = 2
	get.Classes[stats.Status5xx] = 1 + int64(idx)
	get.Samples[stats.Timeout] = "context deadline exceeded"
	get.Samples[stats.Status5xx] = fmt.Sprintf("503 Service Unavailable (interval %d)", idx)
	get.BytesSent, get.BytesRecv = 1000*int64(idx+1), 1<<20+int64(idx)
	put := stats.NewOpStats()
	put.Latency.Record(5 * time.Millisecond)
	put.Service.Record(4 * time.Millisecond)
	put.Classes[stats.OK] = 1
	chat := stats.NewOpStats()
	chat.Latency.Record(time.Second)
	chat.Service.Record(time.Second)
	chat.Classes[stats.OK] = 2
	chat.Measures[stats.TTFT], chat.Measures[stats.ITL] = stats.NewHist(), stats.NewHist()
	for i := range 2 {
		chat.Measures[stats.TTFT].Record(time.Duration(50+i+idx) * time.Millisecond)
		for g := range 40 {
			chat.Measures[stats.ITL].Record(time.Duration(9000+100*g+idx) * time.Microsecond)
		}
	}
	chat.Counters[stats.OutputTokens] = 82 + int64(idx)
	iv.Ops["GET /"], iv.Ops["PUT /x"], iv.Ops["chat"] = get, put, chat
	return iv
}

func checkInterval(t *testing.T, got, want *stats.Interval) {
	t.Helper()
	if got.Index != want.Index || !got.Start.Equal(want.Start) || !got.End.Equal(want.End) ||
		got.Dropped != want.Dropped || got.VUs != want.VUs {
		t.Errorf("interval %d: got index %d %v..%v dropped %d vus %d, want %v..%v dropped %d vus %d", want.Index,
			got.Index, got.Start, got.End, got.Dropped, got.VUs, want.Start, want.End, want.Dropped, want.VUs)
	}
	if got.Lag == nil || !got.Lag.Equal(want.Lag) {
		t.Errorf("interval %d: lag histogram differs", want.Index)
	}
	if !reflect.DeepEqual(got.OpNames(), want.OpNames()) {
		t.Fatalf("interval %d: ops %v, want %v", want.Index, got.OpNames(), want.OpNames())
	}
	for name, w := range want.Ops {
		g := got.Ops[name]
		if g.Classes != w.Classes || g.Samples != w.Samples || g.BytesSent != w.BytesSent || g.BytesRecv != w.BytesRecv {
			t.Errorf("interval %d op %q: got %v %q %d/%d, want %v %q %d/%d", want.Index, name,
				g.Classes, g.Samples, g.BytesSent, g.BytesRecv, w.Classes, w.Samples, w.BytesSent, w.BytesRecv)
		}
		hists := map[string][2]*stats.Hist{
			"latency": {g.Latency, w.Latency}, "service": {g.Service, w.Service},
			"ttfb": {g.TTFB, w.TTFB}, "connect": {g.Connect, w.Connect},
		}
		for m := range stats.NumMeasures {
			hists[m.String()] = [2]*stats.Hist{g.Measures[m], w.Measures[m]}
		}
		for kind, h := range hists {
			if h[0] == nil && h[1] == nil {
				continue
			}
			if h[0] == nil || h[1] == nil || !h[0].Equal(h[1]) {
				t.Errorf("interval %d op %q: %s histogram differs", want.Index, name, kind)
			}
		}
		if g.Mixed != w.Mixed || (g.Failed == nil) != (w.Failed == nil) || g.Failed != nil && !g.Failed.Equal(w.Failed) {
			t.Errorf("interval %d op %q: failed histogram %v (mixed %v), want %v (mixed %v)", want.Index, name, g.Failed, g.Mixed, w.Failed, w.Mixed)
		}
		if g.Counters != w.Counters {
			t.Errorf("interval %d op %q: counters %v, want %v", want.Index, name, g.Counters, w.Counters)
		}
	}
}

func testMeta() Meta {
	return Meta{
		Name: "demo", Tool: "perflab v0.1.0", Command: "perflab run demo.yaml",
		Started: testStart.In(time.FixedZone("CET", 3600)), Host: "bench-1", GoMaxProcs: 8,
		Extra: map[string]string{"git": "abc123", "kernel": "6.12"},
	}
}

var testWorkloads = []Workload{
	{
		Name: "ingest", Driver: "http", Model: ModelOpen, Target: "http://127.0.0.1:8080", Rate: 500,
		Stages: json.RawMessage(`[{"duration":"30s","target":1000}]`), VUsMin: 10, VUsMax: 200,
		Backlog: 100, Duration: 5 * time.Minute, Grace: 10 * time.Second,
		Params: json.RawMessage(`{"method":"GET","headers":{"Authorization":"<redacted>"}}`), Place: []string{"url", "ca_file"},
	},
	{Name: "gomemlimit=2GiB/small/query", Driver: "promql", Model: ModelClosed, Target: "vm", Concurrency: 16,
		Duration: time.Minute, Cell: 1, Profile: "small", Short: "query"},
}

func TestRoundTrip(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range testWorkloads {
		if err := r.AddWorkload(w); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]*stats.Interval{}
	for n, w := range map[string]int{"ingest": 3, "gomemlimit=2GiB/small/query": 2} {
		for i := range w {
			iv := testInterval(i)
			want[n] = append(want[n], iv)
			if err := r.WriteInterval(n, iv); err != nil {
				t.Fatal(err)
			}
		}
	}
	events := []Event{
		{Time: testStart.Add(2 * time.Second), Kind: "note", Message: "target ready"},
		{Time: testStart.Add(3 * time.Second), Kind: "interrupt", Message: "SIGINT"},
	}
	for _, e := range events {
		if err := r.AddEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := r.Status(); err != nil || s.State != StateRunning || !s.Ended.IsZero() {
		t.Errorf("status before Finish = %+v, %v; want running with no end", s, err)
	}
	status := Status{State: StateInterrupted, Ended: testStart.Add(4 * time.Second), Message: "interrupted by user", ExitCode: 130}
	if err := r.Finish(status); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	r2, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	checkRun(t, r2, testMeta(), status, events)
	for name, ivs := range want {
		got, err := r2.Intervals(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ivs) {
			t.Fatalf("%s: %d intervals, want %d", name, len(got), len(ivs))
		}
		for i := range ivs {
			checkInterval(t, got[i], ivs[i])
		}
	}
}

func checkRun(t *testing.T, r *Run, meta Meta, status Status, events []Event) {
	t.Helper()
	m, err := r.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if !m.Started.Equal(meta.Started) {
		t.Errorf("started = %v, want %v", m.Started, meta.Started)
	}
	m.Started = meta.Started
	if !reflect.DeepEqual(m, meta) {
		t.Errorf("meta = %+v, want %+v", m, meta)
	}
	s, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s.State != status.State || !s.Ended.Equal(status.Ended) || s.Message != status.Message || s.ExitCode != status.ExitCode {
		t.Errorf("status = %+v, want %+v", s, status)
	}
	ws, err := r.Workloads()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ws, testWorkloads) {
		t.Errorf("workloads = %+v\nwant %+v", ws, testWorkloads)
	}
	es, err := r.Events()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(events) {
		t.Fatalf("%d events, want %d", len(es), len(events))
	}
	for i := range es {
		if !es[i].Time.Equal(events[i].Time) || es[i].Kind != events[i].Kind || es[i].Message != events[i].Message {
			t.Errorf("event %d = %+v, want %+v", i, es[i], events[i])
		}
	}
}

func TestDirName(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	long := strings.Repeat("a", 100)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"demo", time.Date(2026, 11, 21, 17, 24, 0, 0, time.UTC), "demo-20261121-172400"},
		{"demo", time.Date(2026, 11, 21, 18, 24, 0, 0, cet), "demo-20261121-172400"}, // UTC, not local
		{"Tempo T-Shirt Sizing", testStart, "tempo-t-shirt-sizing-20261121-172400"},
		{"../../etc/passwd", testStart, "etc-passwd-20261121-172400"},
		{"--mimir_vs_vm!!", testStart, "mimir_vs_vm-20261121-172400"},
		{"Ünïcode", testStart, "n-code-20261121-172400"},
		{"", testStart, "run-20261121-172400"},
		{"***", testStart, "run-20261121-172400"},
		{long, testStart, long[:maxNameLen] + "-20261121-172400"},
	}
	for _, tt := range tests {
		if got := DirName(tt.name, tt.t); got != tt.want {
			t.Errorf("DirName(%q, %v) = %q, want %q", tt.name, tt.t, got, tt.want)
		}
	}
}

func TestCreateAddsSuffixWhenDirExists(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "runs") // Create makes parent too
	want := []string{"demo-20261121-172400", "demo-20261121-172400-2", "demo-20261121-172400-3"}
	for _, w := range want {
		r, err := Create(parent, Meta{Name: "Demo", Started: testStart})
		if err != nil {
			t.Fatal(err)
		}
		if got := filepath.Base(r.Dir()); got != w {
			t.Errorf("dir = %q, want %q", got, w)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, want[1], DBName)); err != nil {
		t.Errorf("second run has no database: %v", err)
	}
}

func TestOpenRefusesNewerVersion(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	db, err := sql.Open("sqlite", filepath.Join(r.Dir(), DBName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE meta SET value = '4' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(r.Dir())
	if err == nil || !strings.Contains(err.Error(), "version 4") || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("Open of a version 4 run: err = %v, want one naming version 4 and version 3", err)
	}
}

func TestOpenRefusesNonRun(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil {
		t.Fatal("Open of an empty directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, DBName)); err == nil {
		t.Error("Open created results.db in a directory that had none")
	}
	if err := os.WriteFile(filepath.Join(dir, DBName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a perflab results database") {
		t.Errorf("Open of an empty database: err = %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.WriteInterval("nope", testInterval(0)); err == nil || !strings.Contains(err.Error(), `unknown workload "nope"`) {
		t.Errorf("interval of an unknown workload: err = %v", err)
	}
	if err := r.AddWorkload(Workload{Name: "w", Model: "ramping"}); err == nil {
		t.Error("AddWorkload accepted model \"ramping\"")
	}
	if err := r.AddWorkload(Workload{Name: "w", Model: ModelOpen, Params: json.RawMessage(`{`)}); err == nil {
		t.Error("AddWorkload accepted invalid JSON params")
	}
	if err := r.AddWorkload(Workload{Name: "w", Model: ModelOpen}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddWorkload(Workload{Name: "w", Model: ModelClosed}); err == nil {
		t.Error("AddWorkload accepted a duplicate name")
	}
	if err := r.WriteInterval("w", testInterval(0)); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteInterval("w", testInterval(0)); err == nil {
		t.Error("WriteInterval accepted interval 0 twice")
	}
	if err := r.Finish(Status{State: StateRunning}); err == nil {
		t.Error("Finish accepted state running")
	}
	if err := r.AddEvent(Event{Message: "no kind"}); err == nil {
		t.Error("AddEvent accepted an empty kind")
	}
}

func TestIntervalsChecksErrorCounts(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteInterval("ingest", testInterval(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Exec(`DELETE FROM op_errors WHERE class = 'timeout'`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Intervals("ingest"); err == nil || !strings.Contains(err.Error(), "op_errors sum to") {
		t.Errorf("Intervals with a missing op_errors row: err = %v", err)
	}
}

func TestPath(t *testing.T) {
	r := &Run{dir: filepath.FromSlash("/runs/demo")}
	for name, want := range map[string]string{
		"report.md":       "/runs/demo/report.md",
		"logs/target.log": "/runs/demo/logs/target.log",
		"../../etc/x":     "/runs/demo/etc/x",
	} {
		if got := r.Path(name); got != filepath.FromSlash(want) {
			t.Errorf("Path(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestWorkloadEndRoundTrip(t *testing.T) {
	r, err := Create(t.TempDir(), Meta{Name: "ends"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddWorkload(Workload{Name: "w", Model: ModelOpen}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddWorkload(Workload{Name: "cut", Model: ModelOpen}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 123)
	want := WorkloadEnd{Start: t0, LoadEnd: t0.Add(10 * time.Second), End: t0.Add(11 * time.Second), Scheduled: 2000,
		Dropped: 7, Unissued: 5, MaxVUs: 12, Interrupted: true, WindowStart: t0.Add(time.Second), WindowEnd: t0.Add(10 * time.Second), WindowRule: "rule"}
	if err := r.EndWorkload("w", want); err != nil {
		t.Fatal(err)
	}
	if err := r.EndWorkload("nope", want); err == nil {
		t.Error("EndWorkload accepted an unknown workload")
	}
	ends, err := r.WorkloadEnds()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ends["w"]
	if !ok || !got.Start.Equal(want.Start) || !got.WindowEnd.Equal(want.WindowEnd) || got.Scheduled != 2000 ||
		got.Dropped != 7 || got.Unissued != 5 || got.MaxVUs != 12 || !got.Interrupted || got.WindowRule != "rule" {
		t.Errorf("WorkloadEnds()[w] = %+v, want %+v", got, want)
	}
	if _, ok := ends["cut"]; ok {
		t.Error("a workload that never ended has an end")
	}
}
