package remotewrite

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/testutil"
)

// seriesInRound fills one whole round of g at now and returns every
// series it wrote, as its labels joined.
func seriesInRound(g *generator, now time.Time) []string {
	st := newBuilder()
	var out []string
	for left := g.active; left > 0; {
		n := min(left, 997)
		g.fill(st, int(n), now)
		for _, ts := range st.req.Timeseries {
			var b strings.Builder
			for _, l := range ts.Labels {
				b.WriteString(l.Name + "=" + l.Value + ",")
			}
			out = append(out, b.String())
		}
		left -= n
	}
	return out
}

// TestShardsWriteTheWholeLoadOnce: the series the shards of a load write
// in one round, before and after churn replaced targets, are disjoint and
// together exactly the whole load's.
func TestShardsWriteTheWholeLoadOnce(t *testing.T) {
	c := Config{URL: "http://x/", Targets: 11, SeriesPerTarget: 100, Churn: Churn{Percent: 20, Every: time.Minute}}.withDefaults()
	base := time.Unix(1_700_000_000, 0)
	for _, n := range []int{2, 3, 4} {
		whole := newGenerator(c)
		shards := make([]*generator, n)
		for i := range shards {
			shards[i] = newGenerator(c)
			shards[i].shard(i, n)
		}
		for _, at := range []time.Duration{0, time.Minute, 7 * time.Minute} {
			want := seriesInRound(whole, base.Add(at))
			var got []string
			for _, g := range shards {
				got = append(got, seriesInRound(g, base.Add(at))...)
			}
			slices.Sort(want)
			slices.Sort(got)
			if len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Errorf("%d shards at %v: a series is written by two shards", n, at)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d shards at %v: %d series, the whole load %d, not the same", n, at, len(got), len(want))
			}
		}
	}
}

func TestShardRefusesWorkersWithoutTheirShare(t *testing.T) {
	d := newTestDriver(t, Config{URL: "http://x/", Targets: 2, SeriesPerTarget: 400})
	if err := d.Shard(2, 3); err == nil || !strings.Contains(err.Error(), "none of the 2 targets") {
		t.Errorf("worker 2 of 3 over 2 targets: %v", err)
	}
	d = newTestDriver(t, Config{URL: "http://x/", Targets: 4, SeriesPerTarget: 400, Batch: 1000})
	if err := d.Shard(0, 2); err == nil || !strings.Contains(err.Error(), "fewer than a batch") {
		t.Errorf("half of 4 targets under a batch of 1000: %v", err)
	}
}

// TestShardedReadBack: three workers write their shares to a real
// VictoriaMetrics; the coordinator's driver, given what each acknowledged,
// finds every series and sample, where one worker's Verify alone would
// find the others' too.
func TestShardedReadBack(t *testing.T) {
	t.Parallel()
	base := testutil.StartVictoriaMetrics(t)
	c := Config{URL: base + "/api/v1/write", QueryURL: base, Job: "sharded",
		Targets: 6, SeriesPerTarget: 400, ScrapeInterval: 500 * time.Millisecond, Batch: 300, VerifyWait: 20 * time.Second}
	var states [][]byte
	var series, samples int64
	for i := range 3 {
		d := newTestDriver(t, c)
		if err := d.Shard(i, 3); err != nil {
			t.Fatal(err)
		}
		writeFor(t, d, 1500*time.Millisecond)
		st, err := d.ReadBackState()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
		s, n, _, _ := d.acks.snapshot()
		series, samples = series+s, samples+n
	}
	coord := newTestDriver(t, c)
	checks, err := coord.VerifyShards(context.Background(), states)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{float64(series), float64(samples)} {
		if c := checks[i]; c.State == driver.CheckLost || c.Expected != want || c.Found != want {
			t.Errorf("%s: %+v, want %v expected and found", c.Name, c, want)
		}
	}
}

// TestShardedReadBackTimesLateDataFromTheWorkersWrites: what the
// coordinator's driver finds only on a re-check is late by the time since
// the last write a worker had acknowledged, not since the coordinator's
// own last write (it made none). Two workers write 4 batches each on a
// fake clock that then stands still; the query API shows everything on its
// third ask, 1.5 s (0.5 + 1 s of backoff) after the first.
func TestShardedReadBackTimesLateDataFromTheWorkersWrites(t *testing.T) {
	_, write := startReceiver(t, nil)
	api := &queryAPI{answer: func(_ string, n int) (int, float64) {
		if n < 3 {
			return 200, 0
		}
		return 200, 1
	}, asks: map[string]int{}, status: map[string]int{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c := Config{URL: write, QueryURL: srv.URL, Targets: 2, SeriesPerTarget: 400, Batch: 200, VerifyWait: 45 * time.Second}
	clk := testutil.NewFakeClock(time.Now())
	var states [][]byte
	var series, samples int64
	for i := range 2 {
		d := newTestDriver(t, c)
		d.clock = clk
		if err := d.Shard(i, 2); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if r := doOnce(d, 0); r.Message != "" {
				t.Fatal(r.Message)
			}
		}
		st, err := d.ReadBackState()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
		s, n, _, _ := d.acks.snapshot()
		series, samples = series+s, samples+n
	}
	coord := newTestDriver(t, c)
	coord.clock = clk
	api.first = coord.gen.names(false)[0]
	api.want = map[string]float64{"count": float64(series), "sum": float64(samples)}
	checks, err := coord.VerifyShards(context.Background(), states)
	if err != nil || len(checks) != 2 {
		t.Fatalf("VerifyShards = %+v, %v", checks, err)
	}
	for _, ch := range checks {
		if ch.State != driver.CheckLate || ch.Found != ch.Expected || ch.Late != ch.Expected || ch.LateBy != 1500*time.Millisecond {
			t.Errorf("%s: %+v, want all late by 1.5s", ch.Name, ch)
		}
	}
}
