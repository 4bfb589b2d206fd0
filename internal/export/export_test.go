package export

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// interval is interval i (of one second from t0) of one operation "get":
// ok successes of latency each, and errs 5xx failures.
func interval(i int, ok, errs int, latency time.Duration) *stats.Interval {
	op := stats.NewOpStats()
	for range ok {
		op.Latency.Record(latency)
	}
	op.Classes[stats.OK], op.Classes[stats.Status5xx] = int64(ok), int64(errs)
	op.BytesSent = int64(ok + errs)
	lag := stats.NewHist()
	lag.Record(3 * time.Millisecond)
	return &stats.Interval{Index: i, Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
		Ops: map[string]*stats.OpStats{"get": op}, Dropped: 2, VUs: 7, Lag: lag}
}

// rwReceiver is a remote write receiver that decodes every request.
type rwReceiver struct {
	mu     sync.Mutex
	series map[string][]prompb.Sample // labels (name=value,…) → samples
	header http.Header
	status int // answered; 0: 204
}

func newRWReceiver(t *testing.T) (*rwReceiver, string) {
	r := &rwReceiver{series: map[string][]prompb.Sample{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		pb, err := s2.Decode(nil, b)
		var wr prompb.WriteRequest
		if err == nil {
			err = wr.Unmarshal(pb)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.header = req.Header.Clone()
		if err != nil || req.Header.Get("Content-Encoding") != "snappy" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if r.status != 0 {
			http.Error(w, "refused Bearer s3cr3t-t0ken", r.status)
			return
		}
		for _, ts := range wr.Timeseries {
			var parts []string
			for i, l := range ts.Labels {
				if i > 0 && ts.Labels[i-1].Name >= l.Name {
					t.Errorf("labels not sorted: %v", ts.Labels)
				}
				parts = append(parts, l.Name+"="+l.Value)
			}
			k := strings.Join(parts, ",")
			r.series[k] = append(r.series[k], ts.Samples...)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL + "/api/v1/write"
}

func (r *rwReceiver) get(key string) []prompb.Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.series[key]
}

func TestRemoteWriteSeries(t *testing.T) {
	rcv, url := newRWReceiver(t)
	set, err := Start([]Target{{Kind: RemoteWrite, URL: url, Header: http.Header{"Authorization": {"Bearer tok"}},
		Interval: 50 * time.Millisecond}}, Options{Run: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Profile: "small", Name: "get-api"}
	set.Interval(w, interval(0, 90, 10, 20*time.Millisecond))
	set.Interval(w, interval(1, 100, 0, 30*time.Millisecond))
	set.WorkloadEnd(w, t0, t0.Add(2*time.Second), 5)
	set.Samples("", t0.Add(time.Second), map[string][]Sample{"perflab": {{Metric: "cpu_cores", Value: 0.5}},
		"api": {{Metric: "metric:http_requests", Value: 12}}})
	reps := set.Close(5 * time.Second)
	if len(reps) != 1 || !reps[0].OK() || reps[0].Pushes == 0 || reps[0].Sent == 0 {
		t.Fatalf("report %+v", reps)
	}
	if got := rcv.header.Get("Authorization"); got != "Bearer tok" {
		t.Errorf("Authorization %q", got)
	}
	base := "operation=get,profile=small,run=run-1,workload=get-api"
	ms := func(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixMilli() }
	for _, c := range []struct {
		key  string
		want []prompb.Sample
	}{
		{"__name__=perflab_requests_total," + base, []prompb.Sample{{Timestamp: ms(0), Value: 0}, {Timestamp: ms(1), Value: 100}, {Timestamp: ms(2), Value: 200}}},
		{"__name__=perflab_errors_total,class=status_5xx," + base, []prompb.Sample{{Timestamp: ms(0), Value: 0}, {Timestamp: ms(1), Value: 10}, {Timestamp: ms(2), Value: 10}}},
		{"__name__=perflab_latency_seconds_count," + base, []prompb.Sample{{Timestamp: ms(0), Value: 0}, {Timestamp: ms(1), Value: 90}, {Timestamp: ms(2), Value: 190}}},
		// the first interval's 90 latencies have a p90, not a p99
		{"__name__=perflab_latency_seconds,operation=get,profile=small,quantile=0.9,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(1), Value: 0.020}, {Timestamp: ms(2), Value: 0.030}}},
		{"__name__=perflab_latency_seconds,operation=get,profile=small,quantile=0.99,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(2), Value: 0.030}}},
		{"__name__=perflab_dropped_total,profile=small,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(0), Value: 0}, {Timestamp: ms(1), Value: 2}, {Timestamp: ms(2), Value: 4}}},
		{"__name__=perflab_unissued_total,profile=small,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(0), Value: 0}, {Timestamp: ms(2), Value: 5}}},
		{"__name__=perflab_vus,profile=small,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(1), Value: 7}, {Timestamp: ms(2), Value: 7}}},
		{"__name__=perflab_scheduler_lag_p99_seconds,profile=small,run=run-1,workload=get-api", []prompb.Sample{{Timestamp: ms(1), Value: 0.003}, {Timestamp: ms(2), Value: 0.003}}},
		{"__name__=perflab_component_cpu_cores,component=perflab,run=run-1", []prompb.Sample{{Timestamp: ms(1), Value: 0.5}}},
		{"__name__=perflab_component_metric,component=api,name=http_requests,run=run-1", []prompb.Sample{{Timestamp: ms(1), Value: 12}}},
	} {
		got := rcv.get(c.key)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.key, got, c.want)
			continue
		}
		for i := range got {
			if got[i].Timestamp != c.want[i].Timestamp || !near(got[i].Value, c.want[i].Value, 0.002) {
				t.Errorf("%s: %v, want %v", c.key, got, c.want)
				break
			}
		}
	}
}

func near(a, b, rel float64) bool {
	if b == 0 {
		return a == 0
	}
	d := (a - b) / b
	return d < rel && d > -rel
}

// TestFailuresCountedAndScrubbed: a receiver that refuses every push is
// reported once through OnError and in the report, its error scrubbed,
// and the label values too.
func TestFailuresCountedAndScrubbed(t *testing.T) {
	rcv, url := newRWReceiver(t)
	rcv.status = http.StatusInternalServerError
	var mu sync.Mutex
	var told []string
	scrub := func(s string) string { return strings.ReplaceAll(s, "s3cr3t-t0ken", "${TOKEN}") }
	set, err := Start([]Target{{Kind: RemoteWrite, URL: url, Interval: 20 * time.Millisecond}},
		Options{Run: "r", Scrub: scrub, OnError: func(_ Target, err error) { mu.Lock(); told = append(told, err.Error()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		set.Interval(Workload{Name: "w", Cell: "token=s3cr3t-t0ken"}, interval(i, 1, 0, time.Millisecond))
		time.Sleep(60 * time.Millisecond)
	}
	rep := set.Close(time.Second)[0]
	if rep.Failed < 2 || rep.Failed != rep.Pushes || !strings.Contains(rep.LastError, "HTTP 500") ||
		strings.Contains(rep.LastError, "s3cr3t") || !strings.Contains(rep.LastError, "${TOKEN}") {
		t.Errorf("report %+v", rep)
	}
	if s := rep.String(); !strings.Contains(s, "export to "+url+" (remote-write): ") || !strings.Contains(s, " batches failed: last error HTTP 500") {
		t.Errorf("report line %q", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || strings.Contains(told[0], "s3cr3t") {
		t.Errorf("told %q, want one scrubbed error", told)
	}
	conv := newConverter("r", scrub)
	for _, s := range conv.interval(Workload{Name: "w", Cell: "token=s3cr3t-t0ken"}, interval(0, 1, 0, time.Millisecond)) {
		for _, l := range s.Labels {
			if strings.Contains(l.Value, "s3cr3t") {
				t.Errorf("%s: label %s=%s", s.Name, l.Name, l.Value)
			}
		}
	}
}

// blocked is a sender that never answers until its context ends.
type blocked struct{}

func (blocked) send(ctx context.Context, _ []Series) error { <-ctx.Done(); return ctx.Err() }
func (blocked) close()                                     {}

// TestQueueNeverBlocks: with a target that never answers, putting series
// returns at once, the oldest are dropped beyond the bound and counted,
// and Close returns by its timeout with what was left counted as unsent.
func TestQueueNeverBlocks(t *testing.T) {
	s := &Set{conv: newConverter("r", nil)}
	e := &exporter{target: Target{Kind: RemoteWrite, URL: "http://127.0.0.1:1/", Interval: 10 * time.Millisecond}, q: newQueue(50),
		snd: blocked{}, scrub: s.conv.scrub, stop: make(chan struct{}), done: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	go e.loop()
	s.exps = []*exporter{e}
	put := make(chan struct{})
	go func() {
		defer close(put)
		for i := range 300 {
			s.Interval(Workload{Name: "w"}, interval(i, 1, 0, time.Millisecond))
		}
	}()
	select { // a bound on a hang, not a timing figure
	case <-put:
	case <-time.After(time.Minute):
		t.Fatal("putting intervals blocked behind a sender that never answers")
	}
	closed := make(chan Report)
	go func() { closed <- s.Close(200 * time.Millisecond)[0] }()
	var rep Report
	select {
	case rep = <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return")
	}
	if rep.Dropped == 0 || rep.Unsent == 0 || rep.OK() || !strings.Contains(rep.String(), "dropped from a full queue") {
		t.Errorf("report %+v: %s", rep, rep)
	}
}

func TestQueueDropsOldest(t *testing.T) {
	q := newQueue(5)
	for i := range 4 {
		q.put([]Series{{Name: "a", Value: float64(i)}, {Name: "b", Value: float64(i)}})
	}
	got := q.take(100)
	if len(got) != 4 || got[0].Value != 2 || got[3].Value != 3 {
		t.Errorf("took %v, want the last two batches", got)
	}
	if n, dropped := q.counts(); n != 0 || dropped != 4 {
		t.Errorf("queued %d, dropped %d; want 0, 4", n, dropped)
	}
}

// TestOTLP sends the same run over OTLP/HTTP and OTLP/gRPC: counters are
// cumulative monotonic sums, latency a summary with its quantiles, the
// header arrives.
func TestOTLP(t *testing.T) {
	rcv := testutil.StartOTLPMetrics(t)
	for _, url := range []string{strings.TrimSuffix(rcv.HTTPURL, "/v1/metrics"), "grpc://" + rcv.GRPCAddr} {
		set, err := Start([]Target{{Kind: OTLP, URL: url, Header: http.Header{"Authorization": {"Bearer tok"}}}}, Options{Run: "r"})
		if err != nil {
			t.Fatal(err)
		}
		w := Workload{Profile: "p", Name: "w"}
		set.Interval(w, interval(0, 90, 10, 20*time.Millisecond))
		set.Interval(w, interval(1, 100, 0, 30*time.Millisecond))
		if rep := set.Close(5 * time.Second); !rep[0].OK() {
			t.Fatalf("%s: %+v", url, rep)
		}
	}
	n, auth := rcv.Requests()
	if n < 2 || auth[0] != "Bearer tok" || auth[n-1] != "Bearer tok" {
		t.Errorf("%d requests, Authorization %q", n, auth)
	}
	var sums, quants []float64
	for _, p := range rcv.Points() {
		if p.Attrs["run"] != "r" || p.Attrs["workload"] != "w" {
			t.Errorf("%s attributes %v", p.Name, p.Attrs)
		}
		switch {
		case p.Name == "perflab_requests_total" && p.Kind == "sum" && p.Monotonic && p.Cumulative:
			sums = append(sums, p.Value)
		case p.Name == "perflab_latency_seconds" && p.Kind == "summary" && len(p.Quantiles) > 0:
			quants = append(quants, p.Quantiles[0.99])
		}
	}
	if len(sums) != 6 || sums[2] != 200 || sums[5] != 200 || len(quants) != 4 || !near(quants[1], 0.030, 0.002) {
		t.Errorf("requests %v, p99 %v", sums, quants)
	}
}

func TestParseFlag(t *testing.T) {
	for _, c := range []struct {
		in, err string
		want    Target
	}{
		{in: "remote-write=http://127.0.0.1:8428/api/v1/write", want: Target{Kind: RemoteWrite, URL: "http://127.0.0.1:8428/api/v1/write"}},
		{in: "otlp=grpc://127.0.0.1:4317", want: Target{Kind: OTLP, URL: "grpc://127.0.0.1:4317"}},
		{in: "otlp=https://otlp.example/v1/metrics", want: Target{Kind: OTLP, URL: "https://otlp.example/v1/metrics"}},
		{in: "remote-write=grpc://127.0.0.1:1", err: `scheme "grpc": want http or https`},
		{in: "influx=http://h/", err: `--export influx=http://h/: unknown kind "influx": want one of remote-write, otlp`},
		{in: "prometheus=http://h:9090", err: `unknown kind "prometheus": want one of remote-write, otlp (prometheus takes remote-write: remote-write=URL)`},
		{in: "http://h/", err: "want KIND=URL"},
		{in: "otlp=nohost", err: "want an absolute URL"},
		{in: "otlp=http://u:pass@h/", want: Target{Kind: OTLP, URL: "http://u:pass@h/"}},
	} {
		got, err := ParseFlag(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || got.Kind != c.want.Kind || got.URL != c.want.URL):
			t.Errorf("%s: %+v, %v", c.in, got, err)
		}
	}
	if _, err := ParseFlag("otlp=http://u:pass@h:x/"); err == nil || strings.Contains(err.Error(), "pass") {
		t.Errorf("error %v shows the password", err)
	}
}

// TestOTLPRejectedPointsFail: an OTLP/HTTP answer that rejects data
// points counts as a failed push, with the receiver's message.
func TestOTLPRejectedPointsFail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{PartialSuccess: &colmetricpb.ExportMetricsPartialSuccess{
			RejectedDataPoints: 3, ErrorMessage: "too old"}})
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	set, err := Start([]Target{{Kind: OTLP, URL: srv.URL}}, Options{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	set.Interval(Workload{Name: "w"}, interval(0, 1, 0, time.Millisecond))
	if rep := set.Close(5 * time.Second)[0]; rep.Failed != 1 || rep.LastError != "3 data points rejected: too old" {
		t.Errorf("report %+v", rep)
	}
}
