package remotewrite

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/testutil"
)

// queryAPI is a fake Prometheus query API: answer decides, from the asks
// so far for a count (from 1; "count" for series, "sum" for samples), the
// status and the share of what was acknowledged it shows. A count takes
// several queries (countQueries): the one of the first metric name is
// the ask, and shows it all; the others show 0 with the same status.
type queryAPI struct {
	answer func(agg string, ask int) (status int, share float64)
	first  string             // the first metric name
	want   map[string]float64 // acknowledged, by agg

	mu     sync.Mutex
	asks   map[string]int
	status map[string]int // of the last ask, by agg
}

func (a *queryAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("query")
	agg := "count"
	if strings.HasPrefix(q, "(sum(") {
		agg = "sum"
	}
	a.mu.Lock()
	v := 0.0
	if strings.Contains(q, "(count_over_time("+a.first+"{") {
		a.asks[agg]++
		var share float64
		a.status[agg], share = a.answer(agg, a.asks[agg])
		v = share * a.want[agg]
	}
	status := a.status[agg]
	a.mu.Unlock()
	if status != http.StatusOK {
		w.WriteHeader(status)
		fmt.Fprint(w, `{"status":"error","errorType":"unavailable","error":"ingesters are not ready"}`)
		return
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"%g"]}]}}`, v)
}

// verifyWith writes 4 batches to a fake receiver, then reads them back
// from a fake query API that answers with answer, on a fake clock, and
// returns the checks and the clock.
func verifyWith(t *testing.T, wait time.Duration, answer func(string, int) (int, float64), down bool) ([]driver.Check, *testutil.FakeClock) {
	t.Helper()
	_, write := startReceiver(t, nil)
	api := &queryAPI{answer: answer, asks: map[string]int{}, status: map[string]int{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	if down {
		srv.Close()
	}
	d := newTestDriver(t, Config{URL: write, QueryURL: srv.URL, Targets: 2, SeriesPerTarget: 400, Batch: 200, VerifyWait: wait})
	clk := testutil.NewFakeClock(time.Now())
	d.clock = clk
	for range 4 {
		if r := doOnce(d, 0); r.Message != "" {
			t.Fatal(r.Message)
		}
	}
	series, samples, _, _ := d.acks.snapshot()
	api.first = d.gen.names(false)[0]
	api.want = map[string]float64{"count": float64(series), "sum": float64(samples)}
	checks, err := d.Verify(context.Background())
	if err != nil || len(checks) != 2 || checks[0].Name != "series" || checks[1].Name != "samples" {
		t.Fatalf("Verify = %+v, %v; want the series and samples checks", checks, err)
	}
	return checks, clk
}

// TestVerifyLateSamples: a query API that shows the samples only on the
// third ask, or first half of them, makes the checks late, not lost,
// timed from the last acknowledged write; one that shows them at once,
// ok.
func TestVerifyLateSamples(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(string, int) (int, float64)
		state  string
		late   float64 // share of what was acknowledged
		lateBy time.Duration
	}{
		{"at once", func(string, int) (int, float64) { return 200, 1 }, driver.CheckOK, 0, 0},
		{"on the third ask", func(_ string, n int) (int, float64) {
			if n < 3 {
				return 200, 0
			}
			return 200, 1
		}, driver.CheckLate, 1, 1500 * time.Millisecond},
		{"half, then all", func(_ string, n int) (int, float64) {
			if n == 1 {
				return 200, 0.5
			}
			return 200, 1
		}, driver.CheckLate, 0.5, 500 * time.Millisecond},
		{"a 503 first", func(_ string, n int) (int, float64) {
			if n == 1 {
				return 503, 0
			}
			return 200, 1
		}, driver.CheckLate, 1, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks, _ := verifyWith(t, 45*time.Second, tc.answer, false)
			for _, c := range checks {
				if c.State != tc.state || c.Found != c.Expected || c.Expected == 0 || c.Late != tc.late*c.Expected ||
					c.LateBy != tc.lateBy || c.Reason != "" {
					t.Errorf("%s: %+v, want %s, all found, %v late by %v", c.Name, c, tc.state, tc.late*c.Expected, tc.lateBy)
				}
			}
		})
	}
}

// TestVerifyLostSamples: samples still missing at the deadline are lost,
// after asks with backoff until verify_wait after the first.
func TestVerifyLostSamples(t *testing.T) {
	var asks int
	checks, clk := verifyWith(t, 10*time.Second, func(agg string, n int) (int, float64) {
		if agg == "count" {
			return 200, 1
		}
		asks = n
		return 200, 0.75
	}, false)
	if s := checks[0]; s.State != driver.CheckOK {
		t.Errorf("series %+v, want ok", s)
	}
	if s := checks[1]; s.State != driver.CheckLost || s.Found != 0.75*s.Expected || !strings.Contains(s.Note, "are missing (25%)") {
		t.Errorf("samples %+v, want a quarter lost", s)
	}
	if waited := clk.Now().Sub(clk.Start()); waited != 10*time.Second || asks != 6 { // 0, 0.5, 1.5, 3.5, 7.5, 10 s
		t.Errorf("asked %d times over %v, want 6 until the 10 s deadline", asks, waited)
	}
}

// TestVerifyUnverifiedSamples: a query API that answers 503 to the end,
// or is not there, leaves both checks unverified with the reason.
func TestVerifyUnverifiedSamples(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		down         bool
	}{
		{"503", "HTTP 503: unavailable: ingesters are not ready", false},
		{"connection refused", "connection refused", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks, _ := verifyWith(t, 5*time.Second, func(string, int) (int, float64) { return 503, 0 }, tc.down)
			for _, c := range checks {
				if c.State != driver.CheckUnverified || c.Found != 0 || !strings.Contains(c.Reason, tc.reason) {
					t.Errorf("%s: %+v, want unverified because of %q", c.Name, c, tc.reason)
				}
			}
		})
	}
}

// TestVerifyIsNotLostWithoutAnAnswerShowingIt: two read-backs that look
// like a loss and are none. A receiver holding more than was
// acknowledged (a request that timed out was stored all the same) lost
// nothing; one whose last answers were 503s after a first that showed
// three quarters is unverified: the loss is not known, and may be a delay.
func TestVerifyIsNotLostWithoutAnAnswerShowingIt(t *testing.T) {
	t.Run("more than acknowledged", func(t *testing.T) {
		checks, _ := verifyWith(t, 5*time.Second, func(string, int) (int, float64) { return 200, 1.25 }, false)
		for _, c := range checks {
			if c.State != driver.CheckOK || c.Found != 1.25*c.Expected || !strings.Contains(c.Note, "more than acknowledged") {
				t.Errorf("%s: %+v, want ok, a quarter more found", c.Name, c)
			}
		}
	})
	t.Run("a partial answer, then none", func(t *testing.T) {
		checks, _ := verifyWith(t, 5*time.Second, func(_ string, n int) (int, float64) {
			if n == 1 {
				return 200, 0.75
			}
			return 503, 0
		}, false)
		for _, c := range checks {
			if c.State != driver.CheckUnverified || c.Found != 0.75*c.Expected || !strings.Contains(c.Reason, "HTTP 503") {
				t.Errorf("%s: %+v, want unverified with what the last answer showed", c.Name, c)
			}
		}
	})
}
