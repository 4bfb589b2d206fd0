package httpdriver

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// Server modes for startServer.
const (
	modeH1    = "h1"     // cleartext HTTP/1.1
	modeTLSH1 = "tls-h1" // TLS, ALPN http/1.1 only
	modeTLSH2 = "tls-h2" // TLS, ALPN h2 and http/1.1
	modeH2C   = "h2c"    // cleartext HTTP/2 with prior knowledge (and HTTP/1.1)
)

// testServer is an httptest server that counts the TCP connections it
// accepted, and for TLS modes the path of a PEM file holding its CA.
type testServer struct {
	*httptest.Server
	conns  atomic.Int64
	CAFile string
}

func startServer(t *testing.T, mode string, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{Server: httptest.NewUnstartedServer(h)}
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	switch mode {
	case modeH1:
		ts.Start()
	case modeH2C:
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		ts.Config.Protocols = &p
		ts.Start()
	case modeTLSH1, modeTLSH2:
		ts.EnableHTTP2 = mode == modeTLSH2
		ts.StartTLS()
		ts.CAFile = writeCA(t, ts.Certificate().Raw)
	default:
		t.Fatalf("unknown server mode %q", mode)
	}
	t.Cleanup(ts.Close)
	return ts
}

func writeCA(t *testing.T, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// client is one of the driver's client paths, with a server it talks to.
type client struct {
	name     string
	mode     string // server mode
	proto    string
	maxConns int
	own      bool // perflab's own HTTP/1.1 client
}

// clients covers every path: perflab's own HTTP/1.1 client (a connection
// per VU: the goroutine path, plain and TLS, and the closed model's loop) and
// net/http (shared pools, HTTP/2, h2c).
var clients = []client{
	{"conn-h1", modeH1, ProtoAuto, 0, true},
	{"conn-tls-h1", modeTLSH2, ProtoH1, 0, true},
	{"nethttp-h1-pool", modeH1, ProtoAuto, 64, false},
	{"nethttp-tls-h2", modeTLSH2, ProtoAuto, 0, false},
	{"nethttp-h2c", modeH2C, ProtoH2C, 0, false},
	{"loop-h1", modeH1, ProtoAuto, 0, true},
}

// forEachClient runs f as a subtest for every client.
func forEachClient(t *testing.T, f func(t *testing.T, c client)) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) { f(t, c) })
	}
}

// config is a Config for c against ts at path.
func (c client) config(ts *testServer, path string) Config {
	cfg := Config{URL: ts.URL + path, Proto: c.proto, MaxConns: c.maxConns, CAFile: ts.CAFile, viaLoop: strings.HasPrefix(c.name, "loop")}
	if ownsH1(cfg.withDefaults()) != c.own {
		panic("client " + c.name + " does not take the path it names")
	}
	return cfg
}

func newDriver(t testing.TB, c Config) *Driver {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// do runs one Do and returns its Result and how long Do took.
func do(ctx context.Context, d *Driver, vu int) (driver.Result, time.Duration) {
	var r driver.Result
	start := time.Now()
	d.Do(ctx, vu, &r)
	return r, time.Since(start)
}

// okHandler answers with n bytes.
func okHandler(n int) http.Handler {
	body := make([]byte, n)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(body)
	})
}
