package otlpdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
)

// Facts describes the workload: for ingest, the shape, the seed, the
// measured mean trace and request sizes and what was written and
// rejected so far; for queries, the lookups and searches so far.
func (d *Driver) Facts() []driver.Fact {
	if d.cfg.Mode == ModeQuery {
		return d.q.facts()
	}
	js := d.journal.Stats()
	req := d.requests.Load()
	facts := []driver.Fact{
		{Name: "trace shape", Value: d.cfg.Shape + ": " + d.shape.String()},
		{Name: "seed", Value: strconv.FormatUint(d.seed, 10)},
		{Name: "mean trace size", Value: fmt.Sprintf("%s (%.0f B, over %d generated traces)",
			units.FormatBytes(d.meanTrace), d.meanTrace, d.sampled)},
		{Name: "mean spans per trace", Value: strconv.FormatFloat(d.meanSpans, 'f', 1, 64)},
		{Name: "traces per request", Value: strconv.Itoa(d.cfg.Batch)},
		{Name: "mean request size", Value: units.FormatBytes(d.meanTrace * float64(d.cfg.Batch))},
		{Name: "export requests sent", Value: strconv.FormatInt(req, 10)},
		{Name: "traces written", Value: strconv.FormatInt(js.Traces, 10)},
		{Name: "spans written", Value: strconv.FormatInt(js.Spans, 10)},
		{Name: "spans rejected (partial success)", Value: fmt.Sprintf("%d in %d requests", js.RejectedSpans, d.partials.Load())},
	}
	if req > 0 {
		facts = append(facts, driver.Fact{Name: "mean request size sent",
			Value: units.FormatBytes(float64(d.sent.Load()) / float64(req))})
	}
	return facts
}

// Verify looks up by ID a sample of the traces written (up to
// Config.VerifySample, spread over the run), once the last of them is
// Delay old; those not found, or found with fewer spans than written, it
// looks up again with backoff until Config.VerifyWait after the first
// look. It reports how many traces and spans came back, how many only on
// a re-check (late), how many were still missing (lost) and how many got
// no answer (unverified). An ingest driver without a QueryURL has nothing
// to check (nil, nil). A query driver reports the lookups it made during
// the run, those that got a 404 looked up again the same way.
func (d *Driver) Verify(ctx context.Context) ([]driver.Check, error) {
	if d.cfg.Mode == ModeQuery {
		return d.q.checks(ctx, d.clock, d.cfg.VerifyWait), nil
	}
	sample := d.journal.Sample()
	if d.q == nil || len(sample) == 0 {
		return nil, nil
	}
	if err := d.clock.Sleep(ctx, sample[len(sample)-1].At.Add(d.cfg.Delay).Sub(d.clock.Now())); err != nil {
		return nil, fmt.Errorf("cannot verify written traces: %w", err)
	}
	looks := make([]traceLook, len(sample))
	for i, w := range sample {
		looks[i] = traceLook{w: w, looks: 1}
	}
	n := d.q.recheck(ctx, d.clock, d.cfg.VerifyWait, looks, false)
	return d.checks(looks, n), nil
}

func (d *Driver) checks(looks []traceLook, rounds int) []driver.Check {
	js := d.journal.Stats()
	note := fmt.Sprintf("a sample of %d of the %d traces written, spread over the run, each looked up by ID at least %v "+
		"after its write, and what was missing again until %v after the first look (%d rounds)",
		len(looks), js.Traces, d.cfg.Delay, d.cfg.VerifyWait, rounds)
	spanNote := "spans of the sampled traces that were found, against the spans they were written with"
	if js.RejectedSpans > 0 {
		spanNote += fmt.Sprintf("; the server rejected %d spans in partial successes, so some may be missing by its own account", js.RejectedSpans)
	}
	one := func(*traceLook) float64 { return 1 }
	return []driver.Check{
		tallyTraces(looks, one).check("traces", "traces", note),
		tallySpans(looks).check("spans", "spans", spanNote),
	}
}

// lookup fetches one trace and counts its spans. A 404 is not found; any
// other failure is an error.
func (q *querier) lookup(ctx context.Context, st *queryState, id TraceID) (found bool, spans int, err error) {
	accept := "application/json"
	if q.api == APITempo {
		accept = "application/protobuf"
	}
	a := q.get(ctx, st, q.traceURL(id), accept)
	switch {
	case a.code == http.StatusNotFound:
		return false, 0, nil
	case a.class != stats.OK:
		return false, 0, fmt.Errorf("%s: %s", a.class, a.msg)
	}
	n, err := countSpans(a.data)
	if err != nil {
		return false, 0, fmt.Errorf("cannot count the spans of trace %s: %w", id, err)
	}
	return n > 0, n, nil
}

// traceJSON covers the JSON trace responses: Jaeger's {"data": [{"spans":
// [...]}]}, Tempo's {"batches": [{"scopeSpans": [{"spans": [...]}]}]} and
// Tempo v2's {"trace": {"resourceSpans": [...]}}.
type traceJSON struct {
	Data []struct {
		Spans []struct{} `json:"spans"`
	} `json:"data"`
	Batches []resourceSpansJSON `json:"batches"`
	Trace   struct {
		ResourceSpans []resourceSpansJSON `json:"resourceSpans"`
	} `json:"trace"`
}

type resourceSpansJSON struct {
	ScopeSpans []struct {
		Spans []struct{} `json:"spans"`
	} `json:"scopeSpans"`
}

// countSpans counts the spans of a trace response: JSON (Jaeger, Tempo)
// or protobuf (Tempo's tempopb.Trace, whose batches are field 1 like
// TracesData's resource_spans).
func countSpans(data []byte) (int, error) {
	n := 0
	if t := strings.TrimSpace(string(data[:min(len(data), 16)])); strings.HasPrefix(t, "{") {
		var tj traceJSON
		if err := json.Unmarshal(data, &tj); err != nil {
			return 0, err
		}
		for _, t := range tj.Data {
			n += len(t.Spans)
		}
		for _, rs := range append(tj.Batches, tj.Trace.ResourceSpans...) {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		return n, nil
	}
	var td tracepb.TracesData
	if err := proto.Unmarshal(data, &td); err != nil {
		return 0, err
	}
	for _, rs := range td.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			n += len(ss.GetSpans())
		}
	}
	return n, nil
}
