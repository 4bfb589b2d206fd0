package testutil

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// OTLPMetrics is an OTLP metrics receiver for tests, on 127.0.0.1:
// OTLP/HTTP (protobuf) at HTTPURL, OTLP/gRPC at GRPCAddr. It decodes every
// request and keeps its data points. No real server is used: neither
// Debian's VictoriaMetrics (1.79) nor its Prometheus (2.42) takes OTLP.
type OTLPMetrics struct {
	HTTPURL  string // http://127.0.0.1:PORT/v1/metrics
	GRPCAddr string // 127.0.0.1:PORT

	mu       sync.Mutex
	points   []OTLPPoint
	requests int
	auth     []string // the Authorization header (or metadata) of each request
	colmetricpb.UnimplementedMetricsServiceServer
}

// OTLPPoint is one data point as received.
type OTLPPoint struct {
	Name        string
	Kind        string // sum, gauge or summary
	Monotonic   bool
	Cumulative  bool
	Attrs       map[string]string
	Start, Time time.Time
	Value       float64             // sum, gauge
	Count       uint64              // summary
	Sum         float64             // summary
	Quantiles   map[float64]float64 // summary
}

// StartOTLPMetrics starts the receiver; it stops when the test ends.
func StartOTLPMetrics(t testing.TB) *OTLPMetrics {
	t.Helper()
	r := &OTLPMetrics{}
	hs := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	t.Cleanup(hs.Close)
	r.HTTPURL = hs.URL + "/v1/metrics"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	colmetricpb.RegisterMetricsServiceServer(gs, r)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	r.GRPCAddr = l.Addr().String()
	return r
}

func (r *OTLPMetrics) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/metrics, application/x-protobuf", http.StatusBadRequest)
		return
	}
	b, err := io.ReadAll(req.Body)
	var m colmetricpb.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&m, req.Header.Get("Authorization"))
	out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Export implements the gRPC MetricsService.
func (r *OTLPMetrics) Export(ctx context.Context, m *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	auth := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("authorization")) > 0 {
		auth = md.Get("authorization")[0]
	}
	r.add(m, auth)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func (r *OTLPMetrics) add(m *colmetricpb.ExportMetricsServiceRequest, auth string) {
	var pts []OTLPPoint
	for _, rm := range m.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				pts = append(pts, otlpPoints(mt)...)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.auth = append(r.auth, auth)
	r.points = append(r.points, pts...)
}

func otlpPoints(mt *metricpb.Metric) []OTLPPoint {
	var out []OTLPPoint
	number := func(kind string, p *metricpb.NumberDataPoint) OTLPPoint {
		v := p.GetAsDouble()
		if _, ok := p.GetValue().(*metricpb.NumberDataPoint_AsInt); ok {
			v = float64(p.GetAsInt())
		}
		return OTLPPoint{Name: mt.GetName(), Kind: kind, Attrs: otlpAttrs(p.GetAttributes()), Start: nanos(p.GetStartTimeUnixNano()),
			Time: nanos(p.GetTimeUnixNano()), Value: v}
	}
	switch d := mt.GetData().(type) {
	case *metricpb.Metric_Sum:
		for _, p := range d.Sum.GetDataPoints() {
			pt := number("sum", p)
			pt.Monotonic = d.Sum.GetIsMonotonic()
			pt.Cumulative = d.Sum.GetAggregationTemporality() == metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
			out = append(out, pt)
		}
	case *metricpb.Metric_Gauge:
		for _, p := range d.Gauge.GetDataPoints() {
			out = append(out, number("gauge", p))
		}
	case *metricpb.Metric_Summary:
		for _, p := range d.Summary.GetDataPoints() {
			pt := OTLPPoint{Name: mt.GetName(), Kind: "summary", Attrs: otlpAttrs(p.GetAttributes()), Start: nanos(p.GetStartTimeUnixNano()),
				Time: nanos(p.GetTimeUnixNano()), Count: p.GetCount(), Sum: p.GetSum(), Quantiles: map[float64]float64{}}
			for _, q := range p.GetQuantileValues() {
				pt.Quantiles[q.GetQuantile()] = q.GetValue()
			}
			out = append(out, pt)
		}
	}
	return out
}

func otlpAttrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return out
}

func nanos(n uint64) time.Time { return time.Unix(0, int64(n)) }

// Points are the data points received so far.
func (r *OTLPMetrics) Points() []OTLPPoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]OTLPPoint(nil), r.points...)
}

// Requests is how many requests were received, and the Authorization
// each came with.
func (r *OTLPMetrics) Requests() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, append([]string(nil), r.auth...)
}
