package otlpdriver

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

func TestJournal(t *testing.T) {
	j := NewJournal(4, 4)
	base := time.Unix(1000, 0)
	for i := range 10 {
		j.add(TraceID{byte(i)}, i, base.Add(time.Duration(i)*time.Second))
	}
	j.add(TraceID{10}, 10, base) // a clock reading from before the last one
	if _, ok := j.Pick(base.Add(6*time.Second), 0); ok {
		t.Error("picked from a ring whose oldest entry (7 s) is newer than asked")
	}
	w, ok := j.Pick(base.Add(8*time.Second), 0.99)
	if !ok || w.ID != (TraceID{8}) {
		t.Errorf("Pick(8 s, 0.99) = %v, %v; want trace 8, the newest at or before 8 s", w, ok)
	}
	if w, _ := j.Pick(base.Add(time.Hour), 0.99); w.ID != (TraceID{10}) || w.At != base.Add(9*time.Second) {
		t.Errorf("newest = %v; want trace 10 at the time of the one before it", w)
	}
	// 11 traces into a sample of 4: 4 of them, from the first to the last.
	var ids []byte
	for _, w := range j.Sample() {
		ids = append(ids, w.ID[0])
	}
	if len(ids) != 4 || ids[0] != 0 || ids[3] != 10 {
		t.Errorf("sample = %v, want 4 traces from 0 to 10", ids)
	}
	if st := j.Stats(); st.Traces != 11 || st.Spans != 55 {
		t.Errorf("stats %+v", st)
	}
}

// TestQueryTempo runs a query driver against a fake Tempo API fed by an
// ingest driver: lookups by ID of written traces are found, an unknown ID
// is a 404 counted as lost, searches send the TraceQL, and with no trace
// old enough a lookup runs a search instead.
func TestQueryTempo(t *testing.T) {
	otlp, s := fakeHTTP(t, nil)
	api, seen := fakeQueryAPI(t, s)
	ing := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall, Seed: 3})
	doN(t, ing, 10)
	q := newDriver(t, Config{Mode: ModeQuery, QueryURL: api, Delay: time.Nanosecond, Journal: ing.Journal(),
		Queries: []string{OpTraceByID, OpTraceByID, OpSearch}})
	for i, r := range doN(t, q, 9) {
		want := OpTraceByID
		if i%3 == 2 {
			want = OpSearch
		}
		if r.Op != want || r.Class != stats.OK || r.BytesRecv == 0 {
			t.Errorf("query %d: %s %s %q (%d bytes), want %s ok", i, r.Op, r.Class, r.Message, r.BytesRecv, want)
		}
	}
	if fact(q, "trace_by_id found") != "6" || fact(q, "searches answered") != "3" || fact(q, "searches with no traces") != "0" {
		t.Errorf("facts %v", q.Facts())
	}
	urls := seen()
	u, _ := url.Parse(urls[2])
	if u.Path != "/api/search" || u.Query().Get("q") != `{ resource.service.name = "frontend" }` || u.Query().Get("limit") != "20" {
		t.Errorf("search URL %s", urls[2])
	}

	lost := NewJournal(10, 10)
	lost.add(TraceID{1, 2, 3}, 5, time.Now().Add(-time.Minute))
	q = newDriver(t, Config{Mode: ModeQuery, QueryURL: api, Journal: lost, Queries: []string{OpTraceByID}})
	q.clock = testutil.NewFakeClock(time.Now())
	r := doN(t, q, 1)[0]
	if r.Class != stats.Status4xx || !strings.Contains(r.Message, "not found 1m0") {
		t.Errorf("unknown ID: %s %q, want status_4xx, not found a minute after its write", r.Class, r.Message)
	}
	checks, err := q.Verify(context.Background())
	if err != nil || len(checks) != 1 || checks[0].Expected != 1 || checks[0].Found != 0 || checks[0].State != driver.CheckLost {
		t.Errorf("query Verify = %+v, %v; want 1 expected, 0 found, lost", checks, err)
	}

	q = newDriver(t, Config{Mode: ModeQuery, QueryURL: api, Queries: []string{OpTraceByID}}) // no journal
	if r := doN(t, q, 2)[1]; r.Op != OpSearch || r.Class != stats.OK {
		t.Errorf("no journal: %s %s, want a search", r.Op, r.Class)
	}
	if got := fact(q, "trace_by_id with no trace old enough to look up (skipped with ids_from, else a search)"); got != "2" {
		t.Errorf("fallbacks counted %s, want 2", got)
	}

	// With a journal whose traces are all younger than the delay, a lookup
	// sends nothing (no search storm) and says so in its operation name.
	fresh := NewJournal(10, 10)
	fresh.add(TraceID{4, 5, 6}, 5, time.Now())
	q = newDriver(t, Config{Mode: ModeQuery, QueryURL: api, Journal: fresh, Delay: time.Hour, Queries: []string{OpTraceByID}})
	before := len(seen())
	if r := doN(t, q, 3)[2]; r.Op != OpNoTraceYet || r.Class != stats.OK {
		t.Errorf("fresh journal: %s %s, want %s", r.Op, r.Class, OpNoTraceYet)
	}
	if after := len(seen()); after != before {
		t.Errorf("a lookup with no trace old enough sent %d requests, want none", after-before)
	}
}

func TestQueryJaegerSearch(t *testing.T) {
	_, s := fakeHTTP(t, nil)
	api, seen := fakeQueryAPI(t, s)
	q := newDriver(t, Config{Mode: ModeQuery, QueryURL: api + "/", QueryAPI: APIJaeger, Queries: []string{OpSearch},
		Search: SearchParams{Service: "cart", Operation: "oteldemo.CartService/GetCart", Limit: 5, Lookback: time.Hour}})
	before := time.Now()
	if r := doN(t, q, 1)[0]; r.Class != stats.OK || r.Op != OpSearch {
		t.Fatalf("search: %s %q", r.Class, r.Message)
	}
	u, _ := url.Parse(seen()[0])
	v := u.Query()
	start, end := v.Get("start"), v.Get("end")
	if u.Path != "/api/traces" || v.Get("service") != "cart" || v.Get("operation") != "oteldemo.CartService/GetCart" ||
		v.Get("limit") != "5" || len(start) != 16 || start >= end || end < strconv.FormatInt(before.UnixMicro(), 10) {
		t.Errorf("search URL %s", u)
	}
}

// TestVerifyFake reads back through a fake Tempo API (protobuf traces)
// what the fake OTLP server received: all found; then, with traces the
// server lost, the loss is reported.
func TestVerifyFake(t *testing.T) {
	otlp, s := fakeHTTP(t, nil)
	api, _ := fakeQueryAPI(t, s)
	d := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeMedium, Batch: 2, Seed: 8,
		QueryURL: api, Delay: 10 * time.Millisecond, VerifySample: 10})
	d.clock = testutil.NewFakeClock(time.Now())
	doN(t, d, 30)
	checks, err := d.Verify(context.Background())
	if err != nil || len(checks) != 2 {
		t.Fatalf("Verify = %+v, %v", checks, err)
	}
	for _, c := range checks {
		if c.State != driver.CheckOK || c.Found != c.Expected || c.Expected == 0 {
			t.Errorf("check %+v: want all found", c)
		}
	}
	if checks[0].Expected != 10 { // 60 traces into a sample of 10
		t.Errorf("sampled %v traces, want 10", checks[0].Expected)
	}
	s.mu.Lock()
	for _, w := range d.Journal().Sample()[:3] {
		delete(s.spans, w.ID)
	}
	s.mu.Unlock()
	checks, _ = d.Verify(context.Background())
	if c := checks[0]; c.State != driver.CheckLost || c.Found != c.Expected-3 {
		t.Errorf("3 traces lost: %+v", c)
	}
	if c := checks[1]; c.State != driver.CheckLost || c.Found >= c.Expected {
		t.Errorf("spans of 3 lost traces: %+v", c)
	}
}

func TestVerifyWithoutQueryURL(t *testing.T) {
	otlp, _ := fakeHTTP(t, nil)
	d := newDriver(t, Config{Endpoint: otlp, Protocol: ProtoHTTP, Shape: ShapeSmall})
	doN(t, d, 2)
	if checks, err := d.Verify(context.Background()); checks != nil || err != nil {
		t.Errorf("Verify without query_url = %v, %v; want nothing", checks, err)
	}
	var _ driver.Verifier = d
}
