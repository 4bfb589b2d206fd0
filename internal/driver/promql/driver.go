// Package promql runs PromQL queries against the Prometheus HTTP API
// (Prometheus, VictoriaMetrics, Mimir, Thanos, …): instant queries at now
// and range queries ending now, from an inline list or from a Prometheus
// rules file, where every alerting and recording rule's expression is
// evaluated once per query interval, as a ruler would (the approach of
// VictoriaMetrics' prometheus-benchmark).
//
// Each Do runs the next query in turn. What a Result holds: Op the query's
// name (so each query has its own latency histogram); BytesRecv the
// response body; BytesSent the form-encoded request body; TTFB the time to
// the response headers. Class: OK for a 2xx "status":"success" answer;
// RateLimited for 429, else Status4xx or Status5xx by HTTP status, with the
// API's errorType and error as the message when the body has them;
// Protocol for a 2xx answer with "status":"error" (some backends) or a body
// that is not a valid API response; Partial for an answer marked
// "isPartial": true (VictoriaMetrics, when some storage nodes did not
// answer); else what dial.Classify makes of the error.
//
// The response is read as a stream, never held whole: the driver counts
// the series and points it returns (Facts) in constant memory.
package promql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Closer    = (*Driver)(nil)
	_ driver.Describer = (*Driver)(nil)
	_ driver.Rater     = (*Driver)(nil)
)

// query is a Query ready to send.
type query struct {
	Query
	url    string // …/api/v1/query or …/api/v1/query_range
	prefix []byte // "query=<escaped expr>&"
	step   string // range queries: the step in seconds
}

// Driver runs the queries of its Config in turn. It is safe for concurrent
// use by many VUs; calls to Do with the same vu must not overlap.
type Driver struct {
	cfg      Config
	queries  []query
	fromFile int // how many queries came from the rules file
	client   *http.Client
	header   http.Header // of every request, built once
	host     string
	now      func() time.Time
	cursor   atomic.Uint64
	states   driver.VUs[vuState]
	counts   counts
}

// counts are what the answers said, over the run.
type counts struct {
	answers, empty, partial, series, points atomic.Int64
}

// New validates c, reads its rules file, and builds a Driver.
func New(c Config) (*Driver, error) {
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid promql driver config: %w", errors.Join(errs...))
	}
	c = c.withDefaults()
	qs := append([]Query(nil), c.Queries...)
	var fromFile int
	if c.RulesFile != "" {
		rules, err := loadRules(c.RulesFile)
		if err != nil {
			return nil, err
		}
		qs, fromFile = append(qs, rules...), len(rules)
	}
	d := &Driver{
		cfg:      c,
		fromFile: fromFile,
		client:   dial.NewPlainClient(),
		now:      time.Now,
	}
	d.states.New = func(int) *vuState { return newVUState() }
	base := strings.TrimSuffix(c.URL, "/")
	for i, q := range qs {
		q = q.withDefaults(i)
		pq := query{Query: q, url: base + "/api/v1/query", prefix: []byte("query=" + url.QueryEscape(q.Expr) + "&")}
		if q.Type == Range {
			pq.url = base + "/api/v1/query_range"
			pq.step = strconv.FormatFloat(q.Step.Seconds(), 'f', -1, 64)
		}
		d.queries = append(d.queries, pq)
	}
	d.header, d.host = dial.SplitHeaders(c.Headers)
	d.header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, ok := d.header["User-Agent"]; !ok {
		d.header.Set("User-Agent", dial.UserAgent)
	}
	return d, nil
}

// Close closes idle connections. Call it after the last Do returned.
func (d *Driver) Close() error {
	d.client.CloseIdleConnections()
	return nil
}

// Names are the operation names, one per query, in the order they run.
func (d *Driver) Names() []string {
	names := make([]string, len(d.queries))
	for i, q := range d.queries {
		names[i] = q.Name
	}
	return names
}

// Do runs the next query.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	q := &d.queries[(d.cursor.Add(1)-1)%uint64(len(d.queries))]
	*r = driver.Result{Op: q.Name}
	if ctx.Err() != nil {
		r.Class, r.Message = stats.Interrupted, "interrupted before the request"
		return
	}
	st := d.states.Get(vu)
	st.body = append(st.body[:0], q.prefix...)
	now := d.now()
	if q.Type == Range {
		st.body = append(st.body, "start="...)
		st.body = appendTime(st.body, now.Add(-q.Range))
		st.body = append(st.body, "&end="...)
		st.body = appendTime(st.body, now)
		st.body = append(st.body, "&step="...)
		st.body = append(st.body, q.step...)
	} else {
		st.body = append(st.body, "time="...)
		st.body = appendTime(st.body, now)
	}
	r.BytesSent = int64(len(st.body))
	d.send(ctx, st, q.url, r)
}

// appendTime appends t as Unix seconds with milliseconds.
func appendTime(b []byte, t time.Time) []byte {
	ms := t.UnixMilli()
	b = strconv.AppendInt(b, ms/1000, 10)
	b = append(b, '.', byte('0'+ms/100%10), byte('0'+ms/10%10), byte('0'+ms%10))
	return b
}

// send posts st.body to u and classifies the answer into r.
func (d *Driver) send(ctx context.Context, st *vuState, u string, r *driver.Result) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	st.rd.Reset(st.body)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, u, &st.rd)
	if err != nil {
		r.Class, r.Message = stats.Protocol, err.Error()
		return
	}
	req.ContentLength = int64(len(st.body))
	req.Host = d.host
	req.Header = d.header // shared: net/http only reads it
	resp, err := d.client.Do(req)
	if err != nil {
		d.classifyErr(err, ctx, r)
		return
	}
	defer resp.Body.Close()
	r.TTFB = time.Since(start)
	st.scan.reset(resp.Body, st.buf)
	perr := st.answer.parse(&st.scan)
	n, _ := io.CopyBuffer(io.Discard, resp.Body, st.buf) // what the parser left, if it stopped early
	r.BytesRecv = st.scan.read + n
	d.classify(ctx, resp.StatusCode, perr, st, r)
}

func (d *Driver) classifyErr(err error, ctx context.Context, r *driver.Result) {
	r.Class, r.Message = dial.Classify(err, ctx)
	if r.Class == stats.Timeout && errors.Is(err, context.DeadlineExceeded) {
		r.Message = "query timed out after " + d.cfg.Timeout.String()
	}
}
