package promql

import (
	"context"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/remotewrite"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// load writes 3 node_exporter-like targets for a few seconds through the
// remote write driver, 500 ms apart, and waits until the receiver shows
// them.
func load(t *testing.T, base string) {
	t.Helper()
	w, err := remotewrite.New(remotewrite.Config{URL: base + "/api/v1/write", Targets: 3, SeriesPerTarget: 600,
		ScrapeInterval: 500 * time.Millisecond, Batch: 600, Job: "promql-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tick := time.NewTicker(time.Duration(float64(time.Second) / w.RequestsPerSecond()))
	defer tick.Stop()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); <-tick.C {
		var r driver.Result
		w.Do(context.Background(), 0, &r)
		if r.Class != stats.OK {
			t.Fatalf("remote write: %s %s", r.Class, r.Message)
		}
	}
	probe := newTestDriver(t, Config{URL: base, Queries: []Query{{Expr: `node_load1{job="promql-test"}`}}})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r, series := run(probe)
		if r.Class == stats.OK && series == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the written series did not show: %+v, %d series", r, series)
		}
	}
}

// run does one query and returns its result and series count.
func run(d *Driver) (driver.Result, int64) {
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	return r, d.states.Get(0).answer.series
}

// TestRealServers queries VictoriaMetrics and Prometheus holding series
// written by the remote write driver: instant and range queries return
// the series written, and every rule of the node-exporter rules file
// evaluates without error, the recording rules with series.
func TestRealServers(t *testing.T) {
	for _, srv := range []struct {
		name  string
		start func(testing.TB, ...string) string
	}{
		{"victoriametrics", testutil.StartVictoriaMetrics},
		{"prometheus", testutil.StartPrometheus},
	} {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			base := srv.start(t)
			load(t, base)
			d := newTestDriver(t, Config{URL: base, Queries: []Query{
				{Name: "instant", Expr: `node_memory_MemAvailable_bytes{job="promql-test"}`},
				{Name: "range", Expr: `rate(node_network_receive_bytes_total{job="promql-test"}[2s])`,
					Type: Range, Range: 10 * time.Second, Step: time.Second},
			}})
			if r, series := run(d); r.Class != stats.OK || series != 3 {
				t.Errorf("instant: %+v, %d series", r, series)
			}
			r, series := run(d)
			points := d.states.Get(0).answer.points
			if r.Class != stats.OK || series < 6 || series%3 != 0 || points < 2*series { // lo, eth0, … per target
				t.Errorf("range: %+v, %d series, %d points", r, series, points)
			}
			rules := newTestDriver(t, Config{URL: base, RulesFile: "testdata/node-alerts.yml"})
			for _, name := range rules.Names() {
				r, series := run(rules)
				if r.Op != name || r.Class != stats.OK {
					t.Errorf("rule %s: %+v", name, r)
				}
				if name[0] == 'i' && series == 0 { // the recording rules: instance:…
					t.Errorf("rule %s returned no series", name)
				}
			}
		})
	}
}
