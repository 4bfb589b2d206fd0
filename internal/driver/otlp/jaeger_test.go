package otlpdriver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// doConcurrently runs n operations spread over vus concurrent VUs.
func doConcurrently(d *Driver, vus, n int) []driver.Result {
	out := make([]driver.Result, n)
	var wg sync.WaitGroup
	for vu := range vus {
		wg.Go(func() {
			for i := vu; i < n; i += vus {
				d.Do(context.Background(), vu, &out[i])
			}
		})
	}
	wg.Wait()
	return out
}

// TestJaeger exports traces to a real Jaeger over OTLP/gRPC and OTLP/HTTP,
// reads every one of them back by ID (Verify), then runs trace-by-ID
// lookups and service searches through Jaeger's query API.
func TestJaeger(t *testing.T) {
	grpcAddr, otlpHTTP, queryURL := testutil.StartJaeger(t)
	const delay = 300 * time.Millisecond
	for _, c := range []Config{
		{Protocol: ProtoGRPC, Endpoint: grpcAddr, Shape: ShapeMedium, Seed: 1},
		{Protocol: ProtoHTTP, Endpoint: otlpHTTP, Shape: ShapeSmall, Seed: 2},
	} {
		t.Run(c.Protocol, func(t *testing.T) {
			c.Batch, c.QueryURL, c.QueryAPI, c.Delay = 2, queryURL, APIJaeger, delay
			d := newDriver(t, c)
			for i, r := range doConcurrently(d, 4, 40) {
				if r.Class != stats.OK {
					t.Fatalf("export %d: %s %q", i, r.Class, r.Message)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			checks, err := d.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != 2 || checks[0].Expected != 80 {
				t.Fatalf("checks %+v: want 2, over all 80 traces", checks)
			}
			for _, ch := range checks {
				if ch.State == driver.CheckLost || ch.State == driver.CheckUnverified || ch.Found != ch.Expected {
					t.Errorf("%s: found %v of %v %s (%s)", ch.Name, ch.Found, ch.Expected, ch.Unit, ch.Note)
				}
			}
			q := newDriver(t, Config{Mode: ModeQuery, QueryURL: queryURL, QueryAPI: APIJaeger, Delay: delay,
				Journal: d.Journal(), Search: SearchParams{Service: "frontend", Limit: 5}})
			for i, r := range doConcurrently(q, 2, 20) {
				if r.Class != stats.OK {
					t.Errorf("query %d (%s): %s %q", i, r.Op, r.Class, r.Message)
				}
			}
			if fact(q, "trace_by_id found") != "10" || fact(q, "searches answered") != "10" ||
				fact(q, "searches with no traces") != "0" {
				t.Errorf("facts %v", q.Facts())
			}
		})
	}
	t.Run("lost", func(t *testing.T) {
		j := NewJournal(1, 1)
		j.add(TraceID{0xde, 0xad, 0xbe, 0xef}, 3, time.Now().Add(-time.Minute))
		q := newDriver(t, Config{Mode: ModeQuery, QueryURL: queryURL, QueryAPI: APIJaeger, Journal: j,
			Queries: []string{OpTraceByID}})
		if r := doN(t, q, 1)[0]; r.Class != stats.Status4xx || r.Op != OpTraceByID {
			t.Errorf("never-written trace: %s %s %q, want trace_by_id status_4xx", r.Op, r.Class, r.Message)
		}
		if fact(q, "trace_by_id not found (looked up again after the run)") != "1" {
			t.Errorf("facts %v", q.Facts())
		}
	})
}
