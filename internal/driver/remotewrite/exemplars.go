package remotewrite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/secret"

	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// Exemplars: with Config.ExemplarPercent, that share of the samples of
// counters and of native histograms carries one exemplar, as an
// instrumented service's would: a trace_id label (one of traceIDs
// values, 32 hex digits), a value (a counter's increment, an
// observation near a histogram's mean) and the sample's timestamp. Which
// samples carry one is a hash of the series and the round, so every run
// of a plan sends the same ones.

const (
	traceIDLabel = "trace_id"
	traceIDs     = 4096 // distinct trace IDs the exemplars take
)

// exemplarKind says whether series of kind k may carry exemplars.
func exemplarKind(k kind) bool { return k == counter || k == nhist }

// traceIDList is traceIDs distinct trace IDs.
func traceIDList() []string {
	out := make([]string, traceIDs)
	for i := range out {
		out[i] = fmt.Sprintf("%016x%016x", mix(uint64(i)+1), mix(uint64(i)+traceIDs+1))
	}
	return out
}

// exemplar says whether t's sample at round for instance id carries an
// exemplar, and its trace ID and value.
func (g *generator) exemplar(t *tseries, id, round uint64) (traceID string, value float64, ok bool) {
	if g.exShare == 0 || !exemplarKind(t.kind) {
		return "", 0, false
	}
	h := mix(mix(id*0x9e3779b97f4a7c15+t.group) ^ (round+1)*0xbf58476d1ce4e5b9)
	if unit(h) >= g.exShare {
		return "", 0, false
	}
	u := unit(mix(h))
	if t.kind == nhist {
		value = t.frac * (0.25 + 1.5*u) // about the mean
	} else {
		value = t.mag * (0.5 + u) // about one round's increment
	}
	return g.traceIDs[h%traceIDs], value, true
}

// exState is what a builder reuses for the exemplars of a request.
type exState struct {
	labels []prompb.Label
	ex1    []prompb.Exemplar
	ex2    []writev2.Exemplar
}

func (e *exState) reset() { e.labels, e.ex1, e.ex2 = e.labels[:0], e.ex1[:0], e.ex2[:0] }

// add1 appends an exemplar as remote write 1.0 carries it, returned as a
// one-element slice.
func (e *exState) add1(traceID string, value float64, ms int64) []prompb.Exemplar {
	e.labels = append(e.labels, prompb.Label{Name: traceIDLabel, Value: traceID})
	n := len(e.labels)
	e.ex1 = append(e.ex1, prompb.Exemplar{Labels: e.labels[n-1 : n : n], Value: value, Timestamp: ms})
	k := len(e.ex1)
	return e.ex1[k-1 : k : k]
}

// add2 appends an exemplar as remote write 2.0 carries it: its label's
// name and value as symbols of the request.
func (e *exState) add2(v *v2State, sym *symbols, traceLabel uint32, traceID string, value float64, ms int64) []writev2.Exemplar {
	start := len(v.refs)
	v.refs = append(v.refs, v.ref(sym, traceLabel), uint32(len(v.req.Symbols)))
	v.req.Symbols = append(v.req.Symbols, traceID)
	e.ex2 = append(e.ex2, writev2.Exemplar{LabelsRefs: v.refs[start:len(v.refs):len(v.refs)], Value: value, Timestamp: ms})
	k := len(e.ex2)
	return e.ex2[k-1 : k : k]
}

// exemplarsResponse is what /api/v1/query_exemplars answers.
type exemplarsResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      []struct {
		Exemplars []json.RawMessage `json:"exemplars"`
	} `json:"data"`
}

// countExemplars asks the receiver's exemplar API how many exemplars the
// series of this run's job hold between first and last (ms).
func (d *Driver) countExemplars(ctx context.Context, first, last int64) (float64, error) {
	q := url.Values{"query": {"{" + jobLabel + "=" + strconv.Quote(d.cfg.Job) + "}"},
		"start": {msTime(first)}, "end": {msTime(last)}}
	u := strings.TrimSuffix(d.cfg.QueryURL, "/") + "/api/v1/query_exemplars?" + q.Encode()
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("cannot build exemplar query: %w", err)
	}
	req.Host = d.host
	for k, v := range d.header {
		req.Header[k] = v
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot query exemplars at %s: %w", secret.URL(d.cfg.QueryURL), err)
	}
	defer resp.Body.Close()
	var er exemplarsResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&er); err != nil {
		return 0, fmt.Errorf("cannot decode exemplar query response (HTTP %d): %w", resp.StatusCode, err)
	}
	if er.Status != "success" {
		return 0, fmt.Errorf("cannot query exemplars: HTTP %d: %s: %s", resp.StatusCode, er.ErrorType, er.Error)
	}
	n := 0
	for _, s := range er.Data {
		n += len(s.Exemplars)
	}
	return float64(n), nil
}

// msTime is a time in ms as the Prometheus API takes it: seconds with
// three decimals.
func msTime(ms int64) string {
	return strconv.FormatInt(ms/1000, 10) + "." + fmt.Sprintf("%03d", ms%1000)
}
