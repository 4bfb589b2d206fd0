package otlpdriver

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// grpcExporter calls TraceService/Export on Conns shared connections.
type grpcExporter struct {
	conns   []*grpc.ClientConn
	md      metadata.MD
	timeout time.Duration
}

// rawRequest is an already encoded request; rawCodec sends it as is.
type rawRequest struct{ b []byte }

// rawCodec sends a *rawRequest's bytes unchanged and decodes responses
// with the protobuf runtime. Its name is "proto", so the content type is
// the standard application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if r, ok := v.(*rawRequest); ok {
		return r.b, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T", v)
	}
	return proto.Marshal(m)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (rawCodec) Name() string { return "proto" }

func newGRPCExporter(c Config, tlsConf *tls.Config) (*grpcExporter, error) {
	target, useTLS, err := grpcTarget(c.Endpoint)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if useTLS {
		if tlsConf == nil {
			tlsConf = &tls.Config{}
		}
		creds = credentials.NewTLS(tlsConf)
	}
	g := &grpcExporter{timeout: c.Timeout}
	if len(c.Headers) > 0 {
		g.md = metadata.MD{}
		for k, v := range c.Headers {
			g.md.Set(k, v) // lowercased, as gRPC metadata keys are
		}
	}
	for range c.Conns {
		conn, err := grpc.NewClient("passthrough:///"+target,
			grpc.WithTransportCredentials(creds),
			grpc.WithUserAgent(dial.UserAgent),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			g.close()
			return nil, fmt.Errorf("cannot create grpc client: %w", err)
		}
		g.conns = append(g.conns, conn)
	}
	return g, nil
}

func (g *grpcExporter) close() {
	for _, c := range g.conns {
		_ = c.Close()
	}
}

func (g *grpcExporter) export(parent context.Context, vu int, st *ingestState) reply {
	ctx, cancel := context.WithTimeout(parent, g.timeout)
	defer cancel()
	if g.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, g.md)
	}
	proto.Reset(&st.resp)
	st.raw.b = st.buf
	conn := g.conns[max(vu, 0)%len(g.conns)]
	err := conn.Invoke(ctx, coltracepb.TraceService_Export_FullMethodName, &st.raw, &st.resp)
	if err != nil {
		st.abandon = true
		class, msg := classifyGRPC(err, parent)
		return reply{class: class, msg: msg}
	}
	ps := st.resp.GetPartialSuccess()
	return reply{recv: int64(proto.Size(&st.resp)), rejected: ps.GetRejectedSpans(), partial: ps.GetErrorMessage()}
}

// classifyGRPC maps a failed call to its class, in the spirit of the
// gRPC-to-HTTP status mapping:
//
//   - the VU's ctx done, or Canceled: Interrupted
//   - DeadlineExceeded: Timeout
//   - Unavailable from a connection that could not be made: TLS when the
//     handshake failed, DNS when the name did not resolve, else Connect;
//     Unavailable sent by the server (it is overloaded, shutting down, or
//     its backends are): Status5xx, like HTTP 503
//   - ResourceExhausted: RateLimited, like HTTP 429 (Tempo's ingestion
//     limits), except a message over the size limit: Status4xx (413)
//   - InvalidArgument, FailedPrecondition, OutOfRange, Unauthenticated,
//     PermissionDenied, NotFound, AlreadyExists, Aborted: Status4xx
//   - Unknown, Internal, DataLoss, Unimplemented: Status5xx
func classifyGRPC(err error, parent context.Context) (stats.Class, string) {
	s := status.Convert(err)
	msg := trim("grpc " + s.Code().String() + ": " + s.Message())
	if parent.Err() != nil {
		return stats.Interrupted, msg
	}
	switch s.Code() {
	case codes.OK:
		return stats.OK, ""
	case codes.Canceled:
		return stats.Interrupted, msg
	case codes.DeadlineExceeded:
		return stats.Timeout, msg
	case codes.Unavailable:
		return unavailableClass(s.Message()), msg
	case codes.ResourceExhausted:
		if strings.Contains(s.Message(), "larger than max") {
			return stats.Status4xx, msg
		}
		return stats.RateLimited, msg
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Unauthenticated,
		codes.PermissionDenied, codes.NotFound, codes.AlreadyExists, codes.Aborted:
		return stats.Status4xx, msg
	}
	return stats.Status5xx, msg
}

// unavailableClass tells a connection that could not be made (grpc-go's
// "connection error: desc = ..." and resolver errors) from a server's own
// Unavailable.
func unavailableClass(m string) stats.Class {
	switch {
	case strings.Contains(m, "authentication handshake failed"), strings.Contains(m, "tls:"),
		strings.Contains(m, "x509:"):
		return stats.TLS
	case strings.Contains(m, "no such host"), strings.Contains(m, "name resolver"),
		strings.Contains(m, "produced zero addresses"):
		return stats.DNS
	case strings.HasPrefix(m, "connection error"):
		return stats.Connect
	case strings.Contains(m, "error reading from server"), strings.Contains(m, "connection closed"):
		return stats.Protocol // the connection broke during the call
	}
	return stats.Status5xx
}
