// Package otlpdriver sends generated traces over OTLP (gRPC or HTTP with
// protobuf bodies) and queries them back through Tempo's or Jaeger's HTTP
// API, and reports what happened as driver.Results.
//
// An ingest driver (Config.Mode ingest) exports one ExportTraceServiceRequest
// of Config.Batch traces per Do, operation "export". Traces follow a shape
// (small, medium, large, xlarge or custom; see NamedShape): a root span in
// the entry service fanning out across services to a set depth, with the
// span kinds, names and attributes of a web shop (http.route, rpc.method,
// db.system, messaging.system, …). Generation is deterministic for a seed
// and allocation-free; it runs inside Do, so its cost (BenchmarkGenerateEncode:
// about a microsecond per span or less) is part of the measured latency.
//
// What a Result holds, exactly:
//
//   - BytesSent: the encoded request, uncompressed protobuf (no gRPC or HTTP
//     framing); the figure byte-rate targets are met in (MeanTraceBytes).
//   - BytesRecv: the response body (HTTP), the response message (gRPC).
//   - TTFB: HTTP only, until the response headers; Connect is not measured.
//   - Class: stats.OK; stats.Partial when the server accepted the request
//     but rejected spans (ExportTraceServiceResponse.partial_success; the
//     spans are counted in Facts); HTTP statuses by code (429 RateLimited);
//     gRPC codes as classifyGRPC documents; transport errors as
//     dial.Classify does.
//
// A query driver (Mode query) runs Config.Queries in turn: "trace_by_id"
// looks up a trace the ingest driver wrote at least Config.Delay ago
// (from the Journal they share; found is OK, a 404 is Status4xx and
// counts as not found; Verify looks those up again after the run, and
// only those still missing Config.VerifyWait later are lost), "search" runs a TraceQL search on Tempo or a
// service/operation search on Jaeger. An ingest driver with a QueryURL is
// also a driver.Verifier: after the run it looks up a sample of the
// traces it wrote, spread over the run, looks again with backoff for
// those not found (or not whole) until Config.VerifyWait after its first
// look, and reports how many came back, how many only late, how many
// are lost and whether the query API answered at all.
package otlpdriver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Closer    = (*Driver)(nil)
	_ driver.Describer = (*Driver)(nil)
	_ driver.Verifier  = (*Driver)(nil)
)

// sampleTraces is how many traces New generates and encodes to measure
// the mean encoded size: enough that the mean is within about 0.5 % (one
// standard error) of the mean over a long run, for ~20–80 ms of CPU.
const sampleTraces = 1000

// Driver is an ingest or a query driver. It is safe for concurrent use by
// many VUs; calls to Do with the same vu must not overlap.
type Driver struct {
	cfg     Config
	shape   ShapeParams
	seed    uint64
	journal *Journal

	exp    exporter
	ingest driver.VUs[ingestState]
	q      *querier
	clock  driver.Clock // what Verify waits by; tests set a fake one

	meanTrace, meanSpans float64
	sampled              int // traces measured for meanTrace

	streams uint64 // a worker's random streams start here (Shard), apart from the other workers'

	requests, sent, partials atomic.Int64
}

// ingestState is what one VU reuses from export to export.
type ingestState struct {
	gen     *generator
	enc     *encoder
	traces  []trace
	buf     []byte // the encoded request
	lent    *body  // the HTTP body reading buf, until net/http closes it
	abandon bool   // a failed gRPC call may still hold buf
	raw     rawRequest
	resp    coltracepb.ExportTraceServiceResponse
	reply   []byte // the HTTP response body
}

// New validates c and builds a driver. An ingest driver generates and
// encodes a sample of traces to measure their mean size; no connection is
// opened until the first Do.
func New(c Config) (*Driver, error) {
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid otlp driver config: %w", errors.Join(errs...))
	}
	c = c.withDefaults()
	d := &Driver{cfg: c, shape: c.shape(), seed: c.Seed, journal: c.Journal, clock: driver.WallClock{}}
	if d.seed == 0 {
		d.seed = rand.Uint64()
	}
	c.Seed = d.seed
	tlsConf, err := tlsConfig(c)
	if err != nil {
		return nil, err
	}
	if c.Mode == ModeQuery {
		d.q = newQuerier(c, tlsConf)
		return d, nil
	}
	if d.journal == nil {
		d.journal = NewJournal(c.IDRing, c.VerifySample)
	}
	if c.Protocol == ProtoHTTP {
		d.exp = newHTTPExporter(c, tlsConf)
	} else if d.exp, err = newGRPCExporter(c, tlsConf); err != nil {
		return nil, err
	}
	if c.QueryURL != "" {
		d.q = newQuerier(c, tlsConf)
	}
	d.ingest.New = d.newIngestState
	d.meanTrace, d.meanSpans, d.sampled = measure(d.shape, d.seed, c.Batch)
	return d, nil
}

// newIngestState gives VU vu its own generator, on its own random stream.
func (d *Driver) newIngestState(vu int) *ingestState {
	g := newGenerator(d.shape, d.seed, d.streams+uint64(vu)+1) // stream 0 is measure's
	return &ingestState{gen: g, enc: newEncoder(g.services), traces: make([]trace, d.cfg.Batch)}
}

// measure generates and encodes at least sampleTraces traces, in requests
// of batch, and returns the mean bytes and spans per trace and how many
// traces it made.
func measure(p ShapeParams, seed uint64, batch int) (bytesPerTrace, spansPerTrace float64, n int) {
	g := newGenerator(p, seed, 0)
	e := newEncoder(g.services)
	traces := make([]trace, batch)
	var buf []byte
	var size, spans int
	now := time.Now()
	for n < sampleTraces {
		for i := range traces {
			g.trace(&traces[i], now)
			spans += len(traces[i].spans)
		}
		buf = e.encode(buf[:0], traces)
		size += len(buf)
		n += batch
	}
	return float64(size) / float64(n), float64(spans) / float64(n), n
}

// Journal returns where the driver records the traces it writes; give it
// to the query driver of the same plan as Config.Journal.
func (d *Driver) Journal() *Journal { return d.journal }

// MeanTraceBytes is the mean encoded size of one trace, measured at New
// over a sample of generated traces in requests of Config.Batch: the mean
// request size divided by the batch. 0 for a query driver.
func (d *Driver) MeanTraceBytes() float64 { return d.meanTrace }

// RequestsPerSecond converts a byte rate into the export requests per
// second that carry it: bytesPerSecond / (MeanTraceBytes × Batch). Traces
// per second are that times Batch. 0 for a query driver.
func (d *Driver) RequestsPerSecond(bytesPerSecond float64) float64 {
	if d.meanTrace == 0 {
		return 0
	}
	return bytesPerSecond / (d.meanTrace * float64(d.cfg.Batch))
}

// Close closes the connections. Call it after the last Do returned.
func (d *Driver) Close() error {
	if d.exp != nil {
		d.exp.close()
	}
	if d.q != nil {
		d.q.close()
	}
	return nil
}

// Do exports one request (ingest) or runs one query (query mode).
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	if d.cfg.Mode == ModeQuery {
		d.q.do(ctx, vu, d.journal, r)
		return
	}
	d.export(ctx, vu, r)
}

func (d *Driver) export(ctx context.Context, vu int, r *driver.Result) {
	st := d.ingest.Get(vu)
	if st.abandon || st.lent != nil && !st.lent.closed.Load() {
		st.buf = nil // a request cut short may still read it: leave it be
	}
	st.abandon, st.lent = false, nil
	now := time.Now()
	for i := range st.traces {
		st.gen.trace(&st.traces[i], now)
	}
	st.buf = st.enc.encode(st.buf[:0], st.traces)
	*r = driver.Result{Op: OpExport, BytesSent: int64(len(st.buf))}
	if ctx.Err() != nil {
		r.Class, r.Message = stats.Interrupted, ctx.Err().Error()
		return
	}
	rep := d.exp.export(ctx, vu, st)
	r.TTFB, r.BytesRecv, r.Class, r.Message = rep.ttfb, rep.recv, rep.class, rep.msg
	d.requests.Add(1)
	d.sent.Add(r.BytesSent)
	if rep.class != stats.OK {
		return
	}
	at := time.Now()
	for i := range st.traces {
		t := &st.traces[i]
		d.journal.add(TraceID(t.id), len(t.spans), at)
	}
	if rep.rejected > 0 {
		d.partials.Add(1)
		d.journal.rejected(rep.rejected)
		r.Class, r.Message = stats.Partial, describeReply(rep.rejected, rep.partial)
	}
}
