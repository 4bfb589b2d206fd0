package promql

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// maxMessage bounds Result.Message.
const maxMessage = driver.MaxMessage

// classify sets r's class and message from the HTTP status, what parsing
// the body found (perr: an error reading or decoding it), and the answer,
// and counts what a good answer returned.
func (d *Driver) classify(ctx context.Context, code int, perr error, st *vuState, r *driver.Result) {
	a := &st.answer
	status := "HTTP " + strconv.Itoa(code) + " " + http.StatusText(code)
	switch {
	case perr != nil && !errors.Is(perr, errSyntax): // the body broke off
		d.classifyErr(perr, ctx, r)
		r.Class = dial.BodyClass(r.Class)
	case code == http.StatusTooManyRequests:
		r.Class, r.Message = stats.RateLimited, withAPIError(status, a, perr)
	case code >= 400 && code < 500:
		r.Class, r.Message = stats.Status4xx, withAPIError(status, a, perr)
	case code >= 500 && code < 600:
		r.Class, r.Message = stats.Status5xx, withAPIError(status, a, perr)
	case code < 200 || code >= 300:
		r.Class, r.Message = stats.Protocol, status+" (the API answers 2xx)"
	case perr != nil:
		r.Class, r.Message = stats.Protocol, "cannot decode response: "+perr.Error()
	case string(a.status) == "error":
		r.Class, r.Message = stats.Protocol, withAPIError("status error", a, nil)
	case string(a.status) != "success":
		r.Class, r.Message = stats.Protocol, "response status "+strconv.Quote(string(a.status))+", want success"
	default:
		if a.partial {
			r.Class, r.Message = stats.Partial, "partial response (isPartial: true)"
		}
		d.counts.answers.Add(1)
		d.counts.series.Add(a.series)
		d.counts.points.Add(a.points)
		if a.series == 0 && a.points == 0 {
			d.counts.empty.Add(1)
		}
		if a.partial {
			d.counts.partial.Add(1)
		}
	}
	if len(r.Message) > maxMessage {
		r.Message = r.Message[:maxMessage-3] + "..."
	}
}

// withAPIError is prefix, then the API's "errorType: error" when the body
// was a readable API response that had them.
func withAPIError(prefix string, a *answer, perr error) string {
	if perr != nil || len(a.errorType) == 0 && len(a.error) == 0 {
		return prefix
	}
	msg := prefix + ": "
	if len(a.errorType) > 0 {
		msg += string(a.errorType) + ": "
	}
	return msg + string(a.error)
}

// vuState is what one VU reuses from query to query: the request body and
// its reader, the read buffer, the scanner and what it found.
type vuState struct {
	body   []byte
	rd     bytes.Reader
	buf    []byte
	scan   scanner
	answer answer
}

const readBufSize = 32 << 10

func newVUState() *vuState { return &vuState{buf: make([]byte, readBufSize)} }

// RequestsPerSecond is the rate at which every query runs once per query
// interval.
func (d *Driver) RequestsPerSecond() float64 {
	return float64(len(d.queries)) / d.cfg.QueryInterval.Seconds()
}

// Facts states the queries and their rate, and what the answers returned
// so far: answers, empty and partial ones, series and points.
func (d *Driver) Facts() []driver.Fact {
	src := strconv.Itoa(len(d.queries))
	if d.fromFile > 0 {
		src += " (" + strconv.Itoa(d.fromFile) + " rules from " + d.cfg.RulesFile + ")"
	}
	n := func(v *atomic.Int64) string { return strconv.FormatInt(v.Load(), 10) }
	return []driver.Fact{
		{Name: "queries", Value: src},
		{Name: "query interval", Value: d.cfg.QueryInterval.String()},
		{Name: "requests/s", Value: strconv.FormatFloat(float64(int64(d.RequestsPerSecond()*1000+0.5))/1000, 'f', -1, 64)},
		{Name: "answers", Value: n(&d.counts.answers)},
		{Name: "answers without series", Value: n(&d.counts.empty)},
		{Name: "partial answers", Value: n(&d.counts.partial)},
		{Name: "series returned", Value: n(&d.counts.series)},
		{Name: "points returned", Value: n(&d.counts.points)},
	}
}
