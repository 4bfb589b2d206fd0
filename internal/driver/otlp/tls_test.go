package otlpdriver

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/perflab/perflab/internal/stats"
)

// TestTLS exports over HTTPS and gRPC with TLS to servers with a
// self-signed certificate: refused as class tls unless the certificate is
// trusted through ca_file or verification is off (insecure).
func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&srv.TLS.Certificates[0])))
	coltracepb.RegisterTraceServiceServer(gs, &traceServer{s: &sink{}})
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	// httptest's certificate is for 127.0.0.1 and example.com.
	grpcURL := "https://" + l.Addr().String()

	for _, tc := range []struct {
		name string
		c    Config
		want stats.Class
	}{
		{"http untrusted", Config{Endpoint: srv.URL, Protocol: ProtoHTTP}, stats.TLS},
		{"http ca_file", Config{Endpoint: srv.URL, Protocol: ProtoHTTP, CAFile: ca}, stats.OK},
		{"http insecure", Config{Endpoint: srv.URL, Protocol: ProtoHTTP, Insecure: true}, stats.OK},
		{"grpc untrusted", Config{Endpoint: grpcURL}, stats.TLS},
		{"grpc ca_file", Config{Endpoint: grpcURL, CAFile: ca}, stats.OK},
		{"grpc insecure", Config{Endpoint: grpcURL, Insecure: true}, stats.OK},
	} {
		tc.c.Shape = ShapeSmall
		d := newDriver(t, tc.c)
		if r := doN(t, d, 1)[0]; r.Class != tc.want {
			t.Errorf("%s: %s %q, want %s", tc.name, r.Class, r.Message, tc.want)
		} else if tc.want == stats.TLS && !strings.Contains(r.Message, "certificate") {
			t.Errorf("%s: message %q does not say what was wrong", tc.name, r.Message)
		}
	}
}
