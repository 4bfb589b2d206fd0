package export

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// otlpHTTP pushes to an OTLP/HTTP receiver, protobuf encoded.
type otlpHTTP struct {
	url    string
	header http.Header
	client *http.Client
}

// otlpGRPC calls MetricsService/Export.
type otlpGRPC struct {
	conn *grpc.ClientConn
	md   metadata.MD
}

func newOTLP(t Target) (sender, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/metrics"
		}
		return &otlpHTTP{url: u.String(), header: t.Header, client: newHTTPClient()}, nil
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "grpcs" {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient("passthrough:///"+u.Host, grpc.WithTransportCredentials(creds), grpc.WithUserAgent(userAgent))
	if err != nil {
		return nil, fmt.Errorf("cannot create the gRPC client: %w", err)
	}
	g := &otlpGRPC{conn: conn}
	if len(t.Header) > 0 {
		g.md = metadata.MD{}
		for k, vs := range t.Header {
			g.md.Append(strings.ToLower(k), vs...)
		}
	}
	return g, nil
}

func (o *otlpHTTP) send(ctx context.Context, batch []Series) error {
	body, err := proto.Marshal(encodeOTLP(batch))
	if err != nil {
		return fmt.Errorf("cannot marshal the export request: %w", err)
	}
	req, err := newPost(ctx, o.url, o.header, body)
	if err != nil {
		return err
	}
	answer, err := do(o.client, req)
	if err != nil {
		return err
	}
	var resp colmetricpb.ExportMetricsServiceResponse
	if proto.Unmarshal(answer, &resp) == nil { // an answer that is no response says nothing of rejects
		return rejected(&resp)
	}
	return nil
}

// rejected says how many data points an answer rejected, if any.
func rejected(resp *colmetricpb.ExportMetricsServiceResponse) error {
	if ps := resp.GetPartialSuccess(); ps.GetRejectedDataPoints() > 0 {
		return fmt.Errorf("%d data points rejected: %s", ps.GetRejectedDataPoints(), ps.GetErrorMessage())
	}
	return nil
}

func (o *otlpHTTP) close() { o.client.CloseIdleConnections() }

func (g *otlpGRPC) send(ctx context.Context, batch []Series) error {
	if g.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, g.md)
	}
	resp, err := colmetricpb.NewMetricsServiceClient(g.conn).Export(ctx, encodeOTLP(batch))
	if err != nil {
		return err
	}
	return rejected(resp)
}

func (g *otlpGRPC) close() { _ = g.conn.Close() }

// encodeOTLP is a batch as an export request: one metric per name, in the
// order first met; a counter a cumulative monotonic sum, a gauge a gauge,
// a summary a summary (its quantile 1 the maximum). Labels are data point
// attributes; the resource is service.name perflab.
func encodeOTLP(batch []Series) *colmetricpb.ExportMetricsServiceRequest {
	var metrics []*metricpb.Metric
	byName := map[string]*metricpb.Metric{}
	for _, s := range batch {
		if s.kind == nativeHist {
			continue // remote write only
		}
		m := byName[s.Name]
		if m == nil {
			m = newMetric(s)
			byName[s.Name] = m
			metrics = append(metrics, m)
		}
		attrs := make([]*commonpb.KeyValue, len(s.Labels))
		for i, l := range s.Labels {
			attrs[i] = &commonpb.KeyValue{Key: l.Name, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: l.Value}}}
		}
		start, t := uint64(s.Start.UnixNano()), uint64(s.Time.UnixNano())
		switch d := m.Data.(type) {
		case *metricpb.Metric_Sum:
			d.Sum.DataPoints = append(d.Sum.DataPoints, &metricpb.NumberDataPoint{Attributes: attrs, StartTimeUnixNano: start,
				TimeUnixNano: t, Value: &metricpb.NumberDataPoint_AsDouble{AsDouble: s.Value}})
		case *metricpb.Metric_Gauge:
			d.Gauge.DataPoints = append(d.Gauge.DataPoints, &metricpb.NumberDataPoint{Attributes: attrs, TimeUnixNano: t,
				Value: &metricpb.NumberDataPoint_AsDouble{AsDouble: s.Value}})
		case *metricpb.Metric_Summary:
			p := &metricpb.SummaryDataPoint{Attributes: attrs, StartTimeUnixNano: start, TimeUnixNano: t, Count: s.Count, Sum: s.Sum}
			for _, q := range s.Quantiles {
				p.QuantileValues = append(p.QuantileValues, &metricpb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Q, Value: q.V})
			}
			d.Summary.DataPoints = append(d.Summary.DataPoints, p)
		}
	}
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name",
		Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "perflab"}}}}}
	return &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{{Resource: res,
		ScopeMetrics: []*metricpb.ScopeMetrics{{Scope: &commonpb.InstrumentationScope{Name: "perflab"}, Metrics: metrics}}}}}
}

// newMetric is an empty metric of s's name and kind.
func newMetric(s Series) *metricpb.Metric {
	m := &metricpb.Metric{Name: s.Name}
	switch s.kind {
	case counter:
		m.Data = &metricpb.Metric_Sum{Sum: &metricpb.Sum{IsMonotonic: true,
			AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}
	case gauge:
		m.Data = &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{}}
	default:
		m.Data = &metricpb.Metric_Summary{Summary: &metricpb.Summary{}}
		m.Unit = "s"
	}
	return m
}
