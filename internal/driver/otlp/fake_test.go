package otlpdriver

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/perflab/perflab/internal/driver"
)

// sink is what a fake OTLP server received: every request decoded, its
// size, the headers (or gRPC metadata) of the last one, and the spans of
// every trace by ID.
type sink struct {
	mu     sync.Mutex
	reqs   []*coltracepb.ExportTraceServiceRequest
	sizes  []int
	header http.Header
	spans  map[TraceID][]*tracepb.ResourceSpans // one ResourceSpans per span
}

func (s *sink) add(body []byte, header http.Header) error {
	req := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(body, req); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs, s.sizes, s.header = append(s.reqs, req), append(s.sizes, len(body)), header
	if s.spans == nil {
		s.spans = map[TraceID][]*tracepb.ResourceSpans{}
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				id := TraceID(sp.TraceId)
				one := &tracepb.ResourceSpans{Resource: rs.Resource, ScopeSpans: []*tracepb.ScopeSpans{{Scope: ss.Scope, Spans: []*tracepb.Span{sp}}}}
				s.spans[id] = append(s.spans[id], one)
			}
		}
	}
	return nil
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// trace returns the spans received for id, as a TracesData, and how many.
func (s *sink) trace(id TraceID) (*tracepb.TracesData, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &tracepb.TracesData{ResourceSpans: s.spans[id]}, len(s.spans[id])
}

// fakeHTTP is an OTLP/HTTP receiver at /v1/traces; reply writes the
// answer to the i-th request (from 0), or nil for an empty success.
func fakeHTTP(t *testing.T, reply func(i int, w http.ResponseWriter)) (url string, s *sink) {
	t.Helper()
	s = &sink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
			return
		}
		if err := s.add(body, r.Header.Clone()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if reply != nil {
			reply(s.count()-1, w)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, s
}

// writeProto answers with a protobuf message.
func writeProto(w http.ResponseWriter, status int, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// traceServer is an in-process OTLP/gRPC receiver.
type traceServer struct {
	coltracepb.UnimplementedTraceServiceServer
	s     *sink
	reply func(ctx context.Context, i int) (*coltracepb.ExportTraceServiceResponse, error)
}

func (ts *traceServer) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, v := range md {
		h[http.CanonicalHeaderKey(k)] = v
	}
	if err := ts.s.add(b, h); err != nil {
		return nil, err
	}
	if ts.reply != nil {
		return ts.reply(ctx, ts.s.count()-1)
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// fakeGRPC is an OTLP/gRPC receiver on 127.0.0.1; reply answers the i-th
// request, or nil for an empty success. It returns host:port.
func fakeGRPC(t *testing.T, reply func(ctx context.Context, i int) (*coltracepb.ExportTraceServiceResponse, error)) (addr string, s *sink) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s = &sink{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, &traceServer{s: s, reply: reply})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().String(), s
}

// fakeQueryAPI serves what s received through a Tempo-like (protobuf
// trace by ID, /api/search) and Jaeger-like (JSON trace by ID,
// /api/traces?service=) API, and records the request URLs.
func fakeQueryAPI(t *testing.T, s *sink) (url string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var urls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		urls = append(urls, r.URL.String())
		mu.Unlock()
		switch {
		case r.URL.Path == "/api/search":
			fmt.Fprint(w, `{"traces":[{"traceID":"1"}],"metrics":{}}`)
		case r.URL.Path == "/api/traces":
			fmt.Fprint(w, `{"data":[{"traceID":"1","spans":[{}]}]}`)
		case strings.HasPrefix(r.URL.Path, "/api/traces/"):
			serveTrace(w, r, s)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), urls...) }
}

func serveTrace(w http.ResponseWriter, r *http.Request, s *sink) {
	raw, err := hex.DecodeString(strings.TrimPrefix(r.URL.Path, "/api/traces/"))
	if err != nil || len(raw) != 16 {
		http.Error(w, "bad trace id", http.StatusBadRequest)
		return
	}
	td, n := s.trace(TraceID(raw))
	switch {
	case n == 0:
		http.Error(w, "trace not found", http.StatusNotFound)
	case r.Header.Get("Accept") == "application/protobuf":
		writeProto(w, http.StatusOK, td)
	default:
		fmt.Fprintf(w, `{"data":[{"spans":[%s{}]}]}`, strings.Repeat("{},", n-1))
	}
}

// doN runs n operations on vu 0 and returns their results.
func doN(t *testing.T, d *Driver, n int) []driver.Result {
	t.Helper()
	out := make([]driver.Result, n)
	for i := range out {
		d.Do(context.Background(), 0, &out[i])
	}
	return out
}

func newDriver(t *testing.T, c Config) *Driver {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func fact(d *Driver, name string) string {
	for _, f := range d.Facts() {
		if f.Name == name {
			return f.Value
		}
	}
	return "<no fact " + name + ">"
}
