package otlpdriver

import (
	"context"
	"encoding/hex"
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

// backend is a fake Jaeger query API in front of what a fake OTLP server
// received: answer decides, from a trace's lookups so far (from 1) and
// the time on the fake clock since its write, the status and the share
// of its spans a lookup gets.
type backend struct {
	s      *sink
	answer func(lookup int, age time.Duration) (status int, share float64)

	mu      sync.Mutex
	clk     *testutil.FakeClock
	lookups map[TraceID]int
}

// clockFromNow gives the backend a fake clock that starts now, once the
// traces were written: on it a trace's age is the time since the clock
// started, give or take the time its writing took.
func (b *backend) clockFromNow() *testutil.FakeClock {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clk = testutil.NewFakeClock(time.Now())
	return b.clk
}

// newBackend starts a fake OTLP/HTTP server and the fake query API in
// front of it, both on 127.0.0.1.
func newBackend(t *testing.T, answer func(int, time.Duration) (int, float64)) (otlp, api string, b *backend) {
	t.Helper()
	b = &backend{answer: answer, lookups: map[TraceID]int{}}
	b.clockFromNow()
	otlp, b.s = fakeHTTP(t, nil)
	srv := httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(srv.Close)
	return otlp, srv.URL, b
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := hex.DecodeString(strings.TrimPrefix(r.URL.Path, "/api/traces/"))
	if err != nil || len(raw) != 16 {
		http.Error(w, "bad trace id", http.StatusBadRequest)
		return
	}
	id := TraceID(raw)
	_, n := b.s.trace(id)
	b.mu.Lock()
	b.lookups[id]++
	lookup, age := b.lookups[id], b.clk.Now().Sub(b.clk.Start())
	b.mu.Unlock()
	status, share := b.answer(lookup, age)
	spans := int(share * float64(n))
	switch {
	case status != http.StatusOK:
		http.Error(w, http.StatusText(status), status)
	case n == 0 || spans == 0:
		http.Error(w, "trace not found", http.StatusNotFound)
	default:
		fmt.Fprintf(w, `{"data":[{"spans":[%s{}]}]}`, strings.Repeat("{},", spans-1))
	}
}

// verifyAgainst writes 20 traces through a driver reading back from b,
// on b's clock, and returns its checks.
func verifyAgainst(t *testing.T, otlp, api string, b *backend, wait time.Duration) []driver.Check {
	t.Helper()
	d := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall, Seed: 5, QueryURL: api,
		QueryAPI: APIJaeger, Delay: time.Millisecond, VerifySample: 20, VerifyWait: wait})
	doN(t, d, 20)
	d.clock = b.clockFromNow()
	checks, err := d.Verify(context.Background())
	if err != nil || len(checks) != 2 || checks[0].Name != "traces" || checks[1].Name != "spans" {
		t.Fatalf("Verify = %+v, %v; want the traces and spans checks", checks, err)
	}
	return checks
}

// TestVerifyLateIsNotLost: traces the query API returns only on a later
// lookup, or only seconds after they were written, or first with part of
// their spans, are found late, not lost, and the check says how late.
func TestVerifyLateIsNotLost(t *testing.T) {
	for _, tc := range []struct {
		name               string
		answer             func(lookup int, age time.Duration) (int, float64)
		traces, spans      string
		lateTraces         bool
		minLateBy, maxLate time.Duration
	}{
		{"404 for the first two lookups", func(n int, _ time.Duration) (int, float64) {
			if n <= 2 {
				return http.StatusNotFound, 0
			}
			return http.StatusOK, 1
		}, driver.CheckLate, driver.CheckLate, true, 1500 * time.Millisecond, 20 * time.Second},
		{"404 until 12 s after the write", func(_ int, age time.Duration) (int, float64) {
			if age < 12*time.Second {
				return http.StatusNotFound, 0
			}
			return http.StatusOK, 1
		}, driver.CheckLate, driver.CheckLate, true, 12 * time.Second, 17500 * time.Millisecond},
		{"half the spans at first", func(n int, _ time.Duration) (int, float64) {
			if n == 1 {
				return http.StatusOK, 0.5
			}
			return http.StatusOK, 1
		}, driver.CheckOK, driver.CheckLate, false, 500 * time.Millisecond, 20 * time.Second},
		{"a 503 first", func(n int, _ time.Duration) (int, float64) {
			if n == 1 {
				return http.StatusServiceUnavailable, 0
			}
			return http.StatusOK, 1
		}, driver.CheckLate, driver.CheckLate, true, 500 * time.Millisecond, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otlp, api, b := newBackend(t, tc.answer)
			checks := verifyAgainst(t, otlp, api, b, 30*time.Second)
			tr, sp := checks[0], checks[1]
			if tr.State != tc.traces || tr.Found != tr.Expected || tr.Expected != 20 || tr.Reason != "" {
				t.Errorf("traces %+v, want %s, all 20 found", tr, tc.traces)
			}
			if sp.State != tc.spans || sp.Found != sp.Expected || sp.Late == 0 || sp.Reason != "" {
				t.Errorf("spans %+v, want %s, all found, some late", sp, tc.spans)
			}
			if tc.lateTraces && (tr.Late != 20 || tr.LateBy < tc.minLateBy || tr.LateBy > tc.maxLate ||
				!strings.Contains(tr.Note, "20 traces showed only on a re-check")) {
				t.Errorf("traces %+v: want all 20 late by %v to %v", tr, tc.minLateBy, tc.maxLate)
			}
			if sp.LateBy < tc.minLateBy || sp.LateBy > tc.maxLate {
				t.Errorf("spans late by %v, want %v to %v", sp.LateBy, tc.minLateBy, tc.maxLate)
			}
		})
	}
}

// TestVerifyLooksUpVerifySample: Verify looks up exactly verify_sample
// traces of the many more written, each once when all are found.
func TestVerifyLooksUpVerifySample(t *testing.T) {
	otlp, api, b := newBackend(t, func(int, time.Duration) (int, float64) { return http.StatusOK, 1 })
	d := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall, Seed: 7, QueryURL: api,
		QueryAPI: APIJaeger, Delay: time.Millisecond, VerifySample: 20, VerifyWait: time.Second})
	doN(t, d, 57)
	d.clock = b.clockFromNow()
	checks, err := d.Verify(context.Background())
	if err != nil || len(checks) != 2 {
		t.Fatalf("Verify = %+v, %v", checks, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if tr := checks[0]; tr.Expected != 20 || tr.Found != 20 || len(b.lookups) != 20 || !strings.Contains(tr.Note, "a sample of 20 of the 57 traces") {
		t.Errorf("traces %+v, %d traces looked up; want 20 of 57", tr, len(b.lookups))
	}
}

// TestVerifyLostAtTheDeadline: traces the query API never returns are
// looked up again with backoff until verify_wait after the first look,
// the last time at the deadline, and then they are lost; those it
// returned are not.
func TestVerifyLostAtTheDeadline(t *testing.T) {
	otlp, api, b := newBackend(t, func(int, time.Duration) (int, float64) { return http.StatusOK, 1 })
	d := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall, Seed: 6, QueryURL: api,
		QueryAPI: APIJaeger, Delay: time.Millisecond, VerifySample: 20, VerifyWait: 20 * time.Second})
	doN(t, d, 20)
	d.clock = b.clockFromNow()
	gone := d.Journal().Sample()[:4]
	b.s.mu.Lock()
	for _, w := range gone {
		delete(b.s.spans, w.ID)
	}
	b.s.mu.Unlock()
	checks, err := d.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, sp := checks[0], checks[1]
	if tr.State != driver.CheckLost || tr.Expected != 20 || tr.Found != 16 || tr.Late != 0 ||
		!strings.Contains(tr.Note, "4 traces still missing at the deadline") {
		t.Errorf("traces %+v, want 4 of 20 lost", tr)
	}
	if sp.State != driver.CheckLost || sp.Found >= sp.Expected {
		t.Errorf("spans %+v, want lost", sp)
	}
	if waited := b.clk.Now().Sub(b.clk.Start()); waited < 20*time.Second || waited > 20*time.Second+time.Millisecond {
		t.Errorf("waited %v, want the 1 ms delay and until the 20 s deadline", waited)
	}
	b.mu.Lock()
	looks := b.lookups[gone[0].ID]
	b.mu.Unlock()
	if looks != 8 { // at 0, 0.5, 1.5, 3.5, 7.5, 12.5, 17.5 and 20 s
		t.Errorf("a lost trace was looked up %d times, want 8", looks)
	}
}

// TestVerifyUnverified: a query API that answers 503 or 401, or is not
// there at all, leaves the checks unverified with the reason, never lost
// and never ok.
func TestVerifyUnverified(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		status       int
		down         bool
	}{
		{"503", "503", http.StatusServiceUnavailable, false},
		{"401", "401", http.StatusUnauthorized, false},
		{"connection refused", "connect", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otlp, api, b := newBackend(t, func(int, time.Duration) (int, float64) { return tc.status, 0 })
			if tc.down {
				l := testutil.FreePort(t)
				api = fmt.Sprintf("http://127.0.0.1:%d", l)
			}
			for _, c := range verifyAgainst(t, otlp, api, b, 10*time.Second) {
				if c.State != driver.CheckUnverified || c.Found != 0 || !strings.Contains(c.Reason, tc.reason) {
					t.Errorf("%s: %+v, want unverified, the reason naming %s", c.Name, c, tc.reason)
				}
			}
		})
	}
}

// TestQueryRecheck: a query workload's lookups that got a 404 during the
// run are looked up again after it: found then, they are late; never
// found, lost; with the API down at the end, unverified.
func TestQueryRecheck(t *testing.T) {
	var mu sync.Mutex
	status := http.StatusNotFound
	otlp, api, b := newBackend(t, func(int, time.Duration) (int, float64) {
		mu.Lock()
		defer mu.Unlock()
		return status, 1
	})
	ing := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall, Seed: 7})
	doN(t, ing, 5)
	verify := func(then int) driver.Check {
		t.Helper()
		q := newDriver(t, Config{Mode: ModeQuery, QueryURL: api, QueryAPI: APIJaeger, Journal: ing.Journal(),
			Delay: time.Nanosecond, Queries: []string{OpTraceByID}})
		q.clock = b.clockFromNow()
		mu.Lock()
		status = http.StatusNotFound
		mu.Unlock()
		doN(t, q, 6)
		mu.Lock()
		status = then
		mu.Unlock()
		checks, err := q.Verify(context.Background())
		if err != nil || len(checks) != 1 || checks[0].Name != "trace_by_id" || checks[0].Expected != 6 {
			t.Fatalf("Verify = %+v, %v; want the trace_by_id check of 6 lookups", checks, err)
		}
		return checks[0]
	}
	if c := verify(http.StatusOK); c.State != driver.CheckLate || c.Found != 6 || c.Late != 6 {
		t.Errorf("found after the run: %+v, want 6 lookups late", c)
	}
	if c := verify(http.StatusServiceUnavailable); c.State != driver.CheckUnverified || c.Found != 0 || !strings.Contains(c.Reason, "503") {
		t.Errorf("API down after the run: %+v, want unverified", c)
	}
	b.s.mu.Lock()
	clear(b.s.spans)
	b.s.mu.Unlock()
	if c := verify(http.StatusOK); c.State != driver.CheckLost || c.Found != 0 {
		t.Errorf("never found: %+v, want lost", c)
	}
}
