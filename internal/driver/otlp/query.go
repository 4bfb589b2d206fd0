package otlpdriver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/stats"
)

// maxAnswer bounds the bytes of a query response kept for decoding; the
// rest is read and counted, not kept.
const maxAnswer = 64 << 20

// querier runs trace-by-ID lookups and searches against a query API.
type querier struct {
	api     string
	base    string // QueryURL without a trailing slash
	header  http.Header
	rt      *http.Transport
	client  *http.Client
	timeout time.Duration
	delay   time.Duration
	queries []string
	search  SearchParams
	next    atomic.Uint64
	states  driver.VUs[queryState]

	found, notFound, noID, searches, empty atomic.Int64
	missed                                 missedLog
}

// maxMissed bounds the trace IDs a query driver keeps of the lookups that
// got a 404, to look them up again after the run.
const maxMissed = 10_000

// missedLog keeps the traces lookups did not find during the run, with
// how many lookups each stands for, in bounded memory.
type missedLog struct {
	mu       sync.Mutex
	idx      map[TraceID]int // into looks
	looks    []traceLook
	overflow int64 // 404s of traces beyond maxMissed, not kept
}

func (m *missedLog) add(w Written) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := m.idx[w.ID]; ok {
		m.looks[i].looks++
		return
	}
	if len(m.looks) == maxMissed {
		m.overflow++
		return
	}
	if m.idx == nil {
		m.idx = map[TraceID]int{}
	}
	m.idx[w.ID] = len(m.looks)
	m.looks = append(m.looks, traceLook{w: w, looks: 1})
}

func (m *missedLog) take() ([]traceLook, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]traceLook(nil), m.looks...), m.overflow
}

// queryState is what one VU reuses from query to query.
type queryState struct {
	rng *rand.Rand
	buf []byte
}

func newQuerier(c Config, tlsConf *tls.Config) *querier {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", dial.UserAgent)
	}
	rt := newTransport(tlsConf)
	q := &querier{api: c.QueryAPI, base: strings.TrimSuffix(c.QueryURL, "/"), header: h, rt: rt,
		client: &http.Client{Transport: rt}, timeout: c.Timeout, delay: c.Delay,
		queries: c.Queries, search: c.Search}
	seed := c.Seed
	q.states.New = func(vu int) *queryState {
		return &queryState{rng: rand.New(rand.NewPCG(seed, uint64(vu)+1<<32))}
	}
	return q
}

func (q *querier) close() { q.rt.CloseIdleConnections() }

// do runs the next query of the mix. A trace_by_id without an ingest
// workload to take IDs from runs a search instead. With one (ids_from), a
// lookup due before any trace is delay old sends nothing: it is recorded as
// its own operation, OpNoTraceYet, so the lookups the target really served
// keep their figures and a search storm never replaces them.
func (q *querier) do(ctx context.Context, vu int, j *Journal, r *driver.Result) {
	st := q.states.Get(vu)
	op := q.queries[(q.next.Add(1)-1)%uint64(len(q.queries))]
	if op == OpTraceByID {
		if j != nil {
			if w, ok := j.Pick(time.Now().Add(-q.delay), st.rng.Float64()); ok {
				q.traceByID(ctx, st, w, r)
				return
			}
			q.noID.Add(1)
			*r = driver.Result{Op: OpNoTraceYet}
			return
		}
		q.noID.Add(1)
	}
	q.searchOnce(ctx, st, r)
}

// answer is the outcome of one GET.
type answer struct {
	code  int
	data  []byte // the body, up to maxAnswer
	recv  int64
	ttfb  time.Duration
	class stats.Class
	msg   string
}

// get fetches u, keeping the body in st.buf.
func (q *querier) get(parent context.Context, st *queryState, u, accept string) answer {
	ctx, cancel := context.WithTimeout(parent, q.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{class: stats.Protocol, msg: trim(err.Error())}
	}
	req.Header = q.header.Clone()
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	start := time.Now()
	resp, err := q.client.Do(req)
	if err != nil {
		class, msg := dial.Classify(err, parent)
		return answer{class: class, msg: msg}
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, ttfb: time.Since(start)}
	b := bytes.NewBuffer(st.buf[:0])
	_, err = b.ReadFrom(io.LimitReader(resp.Body, maxAnswer))
	st.buf = b.Bytes()
	a.data, a.recv = st.buf, int64(len(st.buf))
	if err == nil {
		var n int64
		n, err = io.Copy(io.Discard, resp.Body)
		a.recv += n
	}
	switch {
	case err != nil:
		a.class, a.msg = dial.Classify(err, parent)
		a.class = dial.BodyClass(a.class)
	case resp.StatusCode/100 != 2:
		a.class, a.msg = statusClass(resp.StatusCode), statusMessage(resp, a.data)
	}
	return a
}

// traceURL is where the query API serves one trace.
func (q *querier) traceURL(id TraceID) string { return q.base + "/api/traces/" + id.String() }

func (q *querier) traceByID(ctx context.Context, st *queryState, w Written, r *driver.Result) {
	a := q.get(ctx, st, q.traceURL(w.ID), "")
	*r = driver.Result{Op: OpTraceByID, TTFB: a.ttfb, BytesRecv: a.recv, Class: a.class, Message: a.msg}
	switch {
	case a.code == http.StatusOK && a.class == stats.OK:
		q.found.Add(1)
	case a.code == http.StatusNotFound:
		q.notFound.Add(1)
		q.missed.add(w)
		r.Message = trim("trace " + w.ID.String() + " not found " +
			time.Since(w.At).Round(time.Millisecond).String() + " after its write: " + a.msg)
	}
}

// searchURL is the search request: TraceQL on Tempo, service and
// operation on Jaeger, over the last Lookback.
func (q *querier) searchURL(now time.Time) string {
	s := q.search
	v := url.Values{}
	v.Set("limit", strconv.Itoa(s.Limit))
	from := now.Add(-s.Lookback)
	if q.api == APIJaeger {
		v.Set("service", s.Service)
		if s.Operation != "" {
			v.Set("operation", s.Operation)
		}
		v.Set("start", strconv.FormatInt(from.UnixMicro(), 10))
		v.Set("end", strconv.FormatInt(now.UnixMicro(), 10))
		return q.base + "/api/traces?" + v.Encode()
	}
	v.Set("q", s.Query)
	v.Set("start", strconv.FormatInt(from.Unix(), 10))
	v.Set("end", strconv.FormatInt(now.Unix()+1, 10))
	return q.base + "/api/search?" + v.Encode()
}

// searchResults counts the traces of a search response: Tempo's
// {"traces": [...]}, Jaeger's {"data": [...]}.
type searchResults struct {
	Traces []struct{} `json:"traces"`
	Data   []struct{} `json:"data"`
}

func (q *querier) searchOnce(ctx context.Context, st *queryState, r *driver.Result) {
	a := q.get(ctx, st, q.searchURL(time.Now()), "application/json")
	*r = driver.Result{Op: OpSearch, TTFB: a.ttfb, BytesRecv: a.recv, Class: a.class, Message: a.msg}
	if a.class != stats.OK {
		return
	}
	var res searchResults
	if err := json.Unmarshal(a.data, &res); err != nil {
		r.Class, r.Message = stats.Protocol, trim("cannot decode search response: "+err.Error())
		return
	}
	q.searches.Add(1)
	if len(res.Traces)+len(res.Data) == 0 {
		q.empty.Add(1)
	}
}

// facts are the query counts so far.
func (q *querier) facts() []driver.Fact {
	f := func(name string, v int64) driver.Fact {
		return driver.Fact{Name: name, Value: strconv.FormatInt(v, 10)}
	}
	return []driver.Fact{
		{Name: "query api", Value: q.api + " " + secret.URL(q.base)},
		{Name: "lookup delay", Value: q.delay.String()},
		f("trace_by_id found", q.found.Load()),
		f("trace_by_id not found (looked up again after the run)", q.notFound.Load()),
		f("trace_by_id with no trace old enough to look up (skipped with ids_from, else a search)", q.noID.Load()),
		f("searches answered", q.searches.Load()),
		f("searches with no traces", q.empty.Load()),
	}
}

// checks is the read-back of the lookups made during the run: those that
// got a 404 are looked up again with backoff until wait after the first
// re-check; one found then is late, one still missing lost.
func (q *querier) checks(ctx context.Context, clk driver.Clock, wait time.Duration) []driver.Check {
	found, notFound := q.found.Load(), q.notFound.Load()
	if found+notFound == 0 {
		return nil
	}
	missed, overflow := q.missed.take()
	note := "each looked up at least " + q.delay.String() + " after its write during the run"
	if len(missed) > 0 {
		rounds := q.recheck(ctx, clk, wait, missed, true)
		note += fmt.Sprintf("; the %d traces a lookup did not find were looked up again until %v after the run (%d rounds)",
			len(missed), wait, rounds)
	}
	t := tallyTraces(missed, func(l *traceLook) float64 { return float64(l.looks) })
	t.expected += float64(found + overflow)
	t.found += float64(found)
	if overflow > 0 {
		t.unanswered += float64(overflow)
		t.firstErr = cmp.Or(t.firstErr, fmt.Sprintf("%d lookups not found in the run were of traces beyond the %d kept to look up again", overflow, maxMissed))
	}
	return []driver.Check{t.check("trace_by_id", "lookups", note)}
}
