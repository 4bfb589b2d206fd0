// Package remotewrite writes node_exporter-like series to a Prometheus
// remote write receiver (Prometheus, VictoriaMetrics, Mimir, …) and reads
// them back afterwards to say whether any were lost.
//
// The load: Targets targets, each exposing about SeriesPerTarget series of
// the families node_exporter shows (node_cpu_seconds_total{cpu,mode},
// node_memory_*_bytes, node_filesystem_*{device,fstype,mountpoint},
// node_network_*{device}, node_disk_*{device}, the Go runtime, …, and two
// histograms with le buckets), every series labelled instance and job.
// Each is scraped every ScrapeInterval: counters grow, gauges wander,
// histogram buckets stay cumulative. Churn replaces a share of the targets
// every so often with new instance values, so new series appear.
//
// Each Do sends one request of the next Batch samples from a cursor shared
// by all VUs: remote write 1.0 (a snappy-compressed prometheus.WriteRequest)
// or 2.0 (io.prometheus.write.v2.Request: symbols, typed series with help
// texts), as Config.Version says; with "auto" 2.0 until the receiver shows
// it speaks only 1.0 (negotiate.go). Native histograms and exemplars ride
// along when the config asks for them (native.go, exemplars.go). The
// request is built by one of a few builders shared by the VUs, and at most
// MaxInFlight are built or in flight at once (encode.go). At
// RequestsPerSecond the cursor passes every series once per scrape
// interval, as Prometheus would. Samples are stamped with the time of the
// request. Run much faster than that with few series and one series'
// consecutive samples may share a millisecond or arrive out of order,
// which Prometheus rejects.
//
// What a Result holds: Op "remote_write" (a retry: "remote_write_retry");
// BytesSent the compressed body; BytesRecv the response body; TTFB the time
// to the response headers; Class OK for 2xx (a 2.0 request's 2xx only
// with the written headers), RateLimited for 429,
// Status4xx, Status5xx, Protocol for other statuses, else what
// dial.Classify makes of the error. Connect is not measured.
//
// Retries are off unless Config.Retries is set. Then a batch answered 5xx
// or 429, or not sent for a connect error, is queued and resent by a later
// Do after a backoff: each attempt is its own operation, named
// "remote_write_retry", with its own latency and class; Facts count the
// retries and the batches given up.
package remotewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	_ driver.Verifier  = (*Driver)(nil)
)

// Operation names.
const (
	OpWrite = "remote_write"
	OpRetry = "remote_write_retry"
)

// maxMessage bounds Result.Message.
const maxMessage = driver.MaxMessage

// Driver writes the series of its Config. It is safe for concurrent use by
// many VUs; calls to Do with the same vu must not overlap.
type Driver struct {
	cfg      Config
	gen      *generator
	batch    int
	client   *http.Client
	header   http.Header // the plan's, for read-back queries
	header1  http.Header // of every 1.0 write, built once
	header2  http.Header // … and 2.0 write
	proto    *protocol
	host     string
	now      func() time.Time
	clock    driver.Clock // what Verify waits by, and when writes were acknowledged; tests set a fake one
	states   driver.VUs[vuState]
	builders builders
	inFlight chan struct{} // a token per request built or in flight (Config.MaxInFlight)
	bodies   sync.Pool     // of *[]byte: request bodies, given back once sent
	acks     ackLog
	retry    retryQueue
}

// New validates c and builds a Driver.
func New(c Config) (*Driver, error) {
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid remote write config: %w", errors.Join(errs...))
	}
	c = c.withDefaults()
	d := &Driver{
		cfg:    c,
		gen:    newGenerator(c),
		client: dial.NewPlainClient(),
		now:    time.Now,
		clock:  driver.WallClock{},
	}
	d.states.New = func(int) *vuState { return newVUState() }
	d.builders = newBuilders(min(2*runtime.GOMAXPROCS(0), c.MaxInFlight))
	d.inFlight = make(chan struct{}, c.MaxInFlight)
	d.batch = int(min(uint64(c.Batch), d.gen.active))
	d.header, d.host = dial.SplitHeaders(c.Headers)
	d.header1, d.header2 = writeHeader(d.header, false), writeHeader(d.header, true)
	d.proto = newProtocol(c.Version)
	d.acks.spt = int(d.gen.spt)
	return d, nil
}

// Close closes idle connections. Call it after the last Do returned.
func (d *Driver) Close() error {
	d.client.CloseIdleConnections()
	return nil
}

// Do sends one request: a retry that is due, or else the next batch.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	*r = driver.Result{Op: OpWrite}
	if ctx.Err() != nil {
		r.Class, r.Message = stats.Interrupted, "interrupted before the request"
		return
	}
	select {
	case d.inFlight <- struct{}{}:
		defer func() { <-d.inFlight }()
	case <-ctx.Done():
		r.Class, r.Message = stats.Interrupted, "interrupted waiting for a request slot (max_in_flight)"
		return
	}
	st := d.states.Get(vu)
	var p *pending
	if d.cfg.Retries > 0 {
		p = d.retry.takeDue(time.Now())
	}
	var body []byte
	b, v2 := &st.batch, d.proto.v2.Load()
	if p != nil {
		r.Op, body, b, v2 = OpRetry, p.body, &p.batch, p.v2
	} else {
		if err := d.build(ctx, st, v2); err != nil {
			r.Class, r.Message = stats.Protocol, err.Error()
			if ctx.Err() != nil {
				r.Class, r.Message = stats.Interrupted, "interrupted waiting to build the request"
			}
			return
		}
		body = st.body
		d.proto.addSent(b.counts())
	}
	r.BytesSent = int64(len(body))
	d.send(ctx, st, body, v2, b.counts(), r)
	defer d.putBody(st) // after the retry queue copied it
	switch {
	case r.Class == stats.OK:
		d.acks.add(b, d.clock.Now())
	case d.cfg.Retries > 0 && retryable(r.Class):
		d.retry.failed(p, body, b, v2, d.cfg.Retries, d.cfg.RetryBackoff, time.Now())
	case p != nil:
		d.retry.gaveUp.Add(1)
	}
}

// retryable: the receiver asked to be asked again, or never got the request.
func retryable(c stats.Class) bool {
	return c == stats.Status5xx || c == stats.RateLimited || c == stats.Connect
}

// send posts body, a request of version 2.0 when v2 carrying sent, and
// fills in r's TTFB, BytesRecv, Class and Message (answer).
func (d *Driver) send(ctx context.Context, st *vuState, body []byte, v2 bool, sent counts, r *driver.Result) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	st.rd.Reset(body)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, d.cfg.URL, &st.rd)
	if err != nil {
		r.Class, r.Message = stats.Protocol, err.Error()
		return
	}
	req.ContentLength = int64(len(body))
	req.Host = d.host
	req.Header = d.header1 // shared: net/http only reads it
	if v2 {
		req.Header = d.header2
	}
	resp, err := d.client.Do(req)
	if err != nil {
		d.classifyErr(err, ctx, r)
		return
	}
	defer resp.Body.Close()
	r.TTFB = time.Since(start)
	head, n, err := readBody(resp.Body, st.drain)
	r.BytesRecv = n
	switch code := resp.StatusCode; {
	case err != nil:
		d.classifyErr(err, ctx, r)
		r.Class = dial.BodyClass(r.Class)
	case code >= 200 && code < 300:
		d.answered(resp, v2, sent, r)
	case code == http.StatusUnsupportedMediaType && v2:
		r.Class, r.Message = stats.Status4xx, statusMessage(resp, head)
		if d.proto.fallBack("the receiver refused remote write 2.0 with " + r.Message) {
			r.Message += "; falling back to remote write 1.0"
		}
	case code == http.StatusTooManyRequests:
		r.Class, r.Message = stats.RateLimited, statusMessage(resp, head)
	case code >= 400 && code < 500:
		r.Class, r.Message = stats.Status4xx, statusMessage(resp, head)
	case code >= 500 && code < 600:
		r.Class, r.Message = stats.Status5xx, statusMessage(resp, head)
	default:
		r.Class, r.Message = stats.Protocol, statusMessage(resp, head)+" (remote write wants 2xx)"
	}
}

// answered judges a 2xx answer by the written headers: a 2.0 request
// answered without them was not understood (a 1.0 receiver that ignored
// the Content-Type and wrote nothing, as Prometheus' own sender assumes),
// so it failed; with version auto the driver falls back to 1.0.
func (d *Driver) answered(resp *http.Response, v2 bool, sent counts, r *driver.Result) {
	wrote, ok := written(resp)
	if v2 && !ok {
		r.Class, r.Message = stats.Protocol, "HTTP "+strconv.Itoa(resp.StatusCode)+
			" to a remote write 2.0 request without "+hdrSamplesWritten+": a 1.0 receiver, which wrote nothing of it"
		if d.proto.fallBack("the receiver answered 2.0 without saying what it wrote (" + r.Message + ")") {
			r.Message += "; falling back to remote write 1.0"
		}
		return
	}
	d.proto.answered(sent, wrote, ok)
}

func (d *Driver) classifyErr(err error, ctx context.Context, r *driver.Result) {
	r.Class, r.Message = dial.Classify(err, ctx)
	if r.Class == stats.Timeout && errors.Is(err, context.DeadlineExceeded) {
		r.Message = "request timed out after " + d.cfg.Timeout.String()
	}
}

// readBody reads body to the end, returning its first len(buf) bytes (for
// error messages; they live in buf) and its length.
func readBody(body io.Reader, buf []byte) (head []byte, n int64, err error) {
	m, err := io.ReadFull(body, buf)
	head, n = buf[:m], int64(m)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return head, n, nil
	case err != nil:
		return head, n, err
	}
	rest, err := io.Copy(io.Discard, body)
	return head, n + rest, err
}

// statusMessage is "HTTP 400 Bad Request: <the body's first line>".
func statusMessage(resp *http.Response, head []byte) string {
	msg := "HTTP " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	line, _, _ := strings.Cut(strings.TrimSpace(string(head)), "\n")
	if line != "" {
		msg += ": " + line
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	return msg
}
