package otlpdriver

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
)

// checkExports checks n OK exports of batch traces: each request decodes
// (the sink did so), BytesSent is its size, and the journal holds every
// trace the server received with its span count.
func checkExports(t *testing.T, d *Driver, s *sink, results []driver.Result, batch int) {
	t.Helper()
	for i, r := range results {
		if r.Class != stats.OK || r.Op != OpExport {
			t.Fatalf("export %d: %s %s %q", i, r.Op, r.Class, r.Message)
		}
		if r.BytesSent != int64(s.sizes[i]) {
			t.Fatalf("export %d: BytesSent %d, the server got %d bytes", i, r.BytesSent, s.sizes[i])
		}
	}
	if s.count() != len(results) {
		t.Fatalf("server got %d requests, want %d", s.count(), len(results))
	}
	js := d.Journal().Stats()
	if js.Traces != int64(len(results)*batch) || len(s.spans) != len(results)*batch {
		t.Fatalf("journal has %d traces, server %d, want %d", js.Traces, len(s.spans), len(results)*batch)
	}
	for _, w := range d.Journal().Sample() {
		if _, n := s.trace(w.ID); n != w.Spans {
			t.Fatalf("trace %s: server got %d spans, journal says %d", w.ID, n, w.Spans)
		}
	}
}

func TestExportHTTP(t *testing.T) {
	url, s := fakeHTTP(t, nil)
	d := newDriver(t, Config{Endpoint: url, Protocol: ProtoHTTP, Shape: ShapeSmall, Batch: 3, Seed: 5,
		Headers: map[string]string{"X-Scope-OrgID": "tenant-1"}})
	checkExports(t, d, s, doN(t, d, 20), 3)
	if got := s.header.Get("X-Scope-Orgid"); got != "tenant-1" {
		t.Errorf("header X-Scope-OrgID = %q", got)
	}
	if got := fact(d, "traces written"); got != "60" {
		t.Errorf("fact traces written = %s", got)
	}
}

func TestExportGRPC(t *testing.T) {
	addr, s := fakeGRPC(t, nil)
	d := newDriver(t, Config{Endpoint: addr, Shape: ShapeLarge, Batch: 2, Seed: 5, Conns: 2,
		Headers: map[string]string{"X-Scope-OrgID": "tenant-1"}})
	results := make([]driver.Result, 10)
	for i := range results {
		d.Do(context.Background(), i%3, &results[i]) // three VUs over two connections
	}
	checkExports(t, d, s, results, 2)
	if got := s.header.Get("X-Scope-Orgid"); got != "tenant-1" {
		t.Errorf("metadata x-scope-orgid = %q", got)
	}
}

func TestPartialSuccess(t *testing.T) {
	partial := &coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		RejectedSpans: 3, ErrorMessage: "span too old"}}
	url, _ := fakeHTTP(t, func(i int, w http.ResponseWriter) {
		if i%2 == 1 {
			writeProto(w, http.StatusOK, partial)
			return
		}
		writeProto(w, http.StatusOK, &coltracepb.ExportTraceServiceResponse{})
	})
	addr, _ := fakeGRPC(t, func(_ context.Context, i int) (*coltracepb.ExportTraceServiceResponse, error) {
		if i%2 == 1 {
			return partial, nil
		}
		return &coltracepb.ExportTraceServiceResponse{}, nil
	})
	for _, c := range []Config{{Endpoint: url, Protocol: ProtoHTTP}, {Endpoint: addr, Protocol: ProtoGRPC}} {
		t.Run(c.Protocol, func(t *testing.T) {
			c.Shape, c.Seed = ShapeSmall, 1
			d := newDriver(t, c)
			for i, r := range doN(t, d, 4) {
				want := stats.OK
				if i%2 == 1 {
					want = stats.Partial
				}
				if r.Class != want {
					t.Errorf("export %d: %s %q, want %s", i, r.Class, r.Message, want)
				}
				if want == stats.Partial && r.Message != "partial success: 3 spans rejected: span too old" {
					t.Errorf("export %d: message %q", i, r.Message)
				}
			}
			if got := fact(d, "spans rejected (partial success)"); got != "6 in 2 requests" {
				t.Errorf("fact = %q", got)
			}
			if d.Journal().Stats().Traces != 4 {
				t.Error("traces of partly accepted requests are not in the journal")
			}
		})
	}
}

func TestHTTPStatusClasses(t *testing.T) {
	for _, tc := range []struct {
		status int
		class  stats.Class
	}{
		{http.StatusServiceUnavailable, stats.Status5xx},
		{http.StatusTooManyRequests, stats.RateLimited},
		{http.StatusBadRequest, stats.Status4xx},
		{http.StatusRequestEntityTooLarge, stats.Status4xx},
		{http.StatusFound, stats.Protocol},
	} {
		url, _ := fakeHTTP(t, func(_ int, w http.ResponseWriter) {
			writeProto(w, tc.status, &spb.Status{Code: int32(codes.Unavailable), Message: "ingesters unhealthy"})
		})
		d := newDriver(t, Config{Endpoint: url, Protocol: ProtoHTTP, Shape: ShapeSmall})
		r := doN(t, d, 1)[0]
		if r.Class != tc.class || !strings.HasSuffix(r.Message, ": ingesters unhealthy") {
			t.Errorf("HTTP %d: %s %q, want %s with the status message", tc.status, r.Class, r.Message, tc.class)
		}
		if d.Journal().Stats().Traces != 0 {
			t.Errorf("HTTP %d: a refused trace is in the journal", tc.status)
		}
	}
}

func TestGRPCCodeClasses(t *testing.T) {
	for _, tc := range []struct {
		code  codes.Code
		class stats.Class
	}{
		{codes.Unavailable, stats.Status5xx},
		{codes.ResourceExhausted, stats.RateLimited},
		{codes.InvalidArgument, stats.Status4xx},
		{codes.Unauthenticated, stats.Status4xx},
		{codes.Internal, stats.Status5xx},
		{codes.Unimplemented, stats.Status5xx},
	} {
		addr, _ := fakeGRPC(t, func(context.Context, int) (*coltracepb.ExportTraceServiceResponse, error) {
			return nil, status.Error(tc.code, "no")
		})
		d := newDriver(t, Config{Endpoint: addr, Shape: ShapeSmall})
		if r := doN(t, d, 1)[0]; r.Class != tc.class || r.Message != "grpc "+tc.code.String()+": no" {
			t.Errorf("%s: %s %q, want %s", tc.code, r.Class, r.Message, tc.class)
		}
	}
}

func TestGRPCTransportClasses(t *testing.T) {
	// Nothing listens on a port we held and closed: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	d := newDriver(t, Config{Endpoint: closed, Shape: ShapeSmall})
	if r := doN(t, d, 1)[0]; r.Class != stats.Connect {
		t.Errorf("refused: %s %q, want connect", r.Class, r.Message)
	}
	slow, _ := fakeGRPC(t, func(ctx context.Context, _ int) (*coltracepb.ExportTraceServiceResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	d = newDriver(t, Config{Endpoint: slow, Shape: ShapeSmall, Timeout: 100 * time.Millisecond})
	if r := doN(t, d, 1)[0]; r.Class != stats.Timeout {
		t.Errorf("slow server: %s %q, want timeout", r.Class, r.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	var r driver.Result
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("cancelled: %s %q, want interrupted", r.Class, r.Message)
	}
	d.Do(ctx, 0, &r) // the buffer lent to the cut-short call is not reused
	if r.Class != stats.Interrupted {
		t.Errorf("done ctx: %s %q, want interrupted", r.Class, r.Message)
	}
}

// TestByteRate checks that MeanTraceBytes, measured at New, is within 2 %
// of the mean size of what the driver then sends, and the conversion of a
// byte rate into requests per second.
func TestByteRate(t *testing.T) {
	rate, err := units.ParseByteRate("5.8MB/s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape    string
		batch, n int
	}{{ShapeSmall, 1, 2000}, {ShapeMedium, 1, 1000}, {ShapeLarge, 5, 200}, {ShapeXLarge, 10, 50}} {
		var got int64 // bytes received, counted without decoding: the sink's decoding is slow
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			atomic.AddInt64(&got, n)
		}))
		t.Cleanup(srv.Close)
		d := newDriver(t, Config{Endpoint: srv.URL, Protocol: ProtoHTTP, Shape: tc.shape, Batch: tc.batch, Seed: 77})
		var sent int64
		for _, r := range doN(t, d, tc.n) {
			sent += r.BytesSent
		}
		if got != sent {
			t.Fatalf("%s: BytesSent sums to %d, the server got %d", tc.shape, sent, got)
		}
		actual := float64(got) / float64(tc.n*tc.batch)
		mean := d.MeanTraceBytes()
		if math.Abs(mean-actual)/actual > 0.02 {
			t.Errorf("%s batch %d: MeanTraceBytes %.0f, actual mean %.0f: off by more than 2 %%", tc.shape, tc.batch, mean, actual)
		}
		want := 5.8e6 / (mean * float64(tc.batch))
		if got := d.RequestsPerSecond(rate); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: RequestsPerSecond(5.8MB/s) = %v, want %v", tc.shape, got, want)
		}
		t.Logf("%s batch %d: mean trace %.0f B (measured at New), %.0f B sent; 5.8MB/s = %.1f requests/s",
			tc.shape, tc.batch, mean, actual, d.RequestsPerSecond(rate))
	}
}

func TestHTTPTransportClasses(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stall:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stall) })
	d := newDriver(t, Config{Endpoint: srv.URL, Protocol: ProtoHTTP, Shape: ShapeSmall, Timeout: 100 * time.Millisecond})
	if r := doN(t, d, 1)[0]; r.Class != stats.Timeout {
		t.Errorf("stalled server: %s %q, want timeout", r.Class, r.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	var r driver.Result
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("cancelled: %s %q, want interrupted", r.Class, r.Message)
	}
	d = newDriver(t, Config{Endpoint: "http://127.0.0.1:1", Protocol: ProtoHTTP, Shape: ShapeSmall})
	if r := doN(t, d, 1)[0]; r.Class != stats.Connect {
		t.Errorf("refused: %s %q, want connect", r.Class, r.Message)
	}
}
