package testutil

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// JaegerInstall is how scripts/install-deps.sh installs Jaeger.
const JaegerInstall = "go install github.com/jaegertracing/jaeger/cmd/all-in-one@v1.42.0"

// StartJaeger starts Jaeger 1.42 all-in-one with its in-memory storage
// (all-in-one's default; at most 100000 traces) and its OTLP receivers on,
// with every listener — OTLP gRPC and HTTP, collector, query, agent (UDP),
// sampling and admin — on 127.0.0.1 at a free port. It waits until the
// admin health check says "Server available" and stops Jaeger when the
// test ends. It returns the OTLP/gRPC address ("127.0.0.1:PORT"), the
// OTLP/HTTP base URL and the query API base URL (trace by ID at
// /api/traces/<id>, search at /api/traces?service=…).
//
// all-in-one is looked up in PATH and in GOBIN or GOPATH/bin, where
// scripts/install-deps.sh puts it; when missing the test is skipped (or
// fails, see Unavailable).
func StartJaeger(t testing.TB) (otlpGRPC, otlpHTTP, queryURL string) {
	t.Helper()
	bin := jaegerBinary(t)
	var p jaegerPorts
	startServer(t, server{
		name: "jaeger",
		bin:  bin,
		args: func(_ string, admin int) ([]string, error) {
			p = newJaegerPorts(t)
			return p.args(admin), nil
		},
		path: "/",
		ready: func(status int, body string) bool {
			return status == http.StatusOK && strings.Contains(body, "Server available")
		},
	})
	return p.addr(p.otlpGRPC), "http://" + p.addr(p.otlpHTTP), "http://" + p.addr(p.queryHTTP)
}

// jaegerPorts are the ports of one Jaeger, but the admin port.
type jaegerPorts struct {
	otlpGRPC, otlpHTTP, collGRPC, collHTTP, sampling, queryGRPC, queryHTTP int // TCP
	binary, compact, zipkin                                                int // UDP
}

func newJaegerPorts(t testing.TB) jaegerPorts {
	tcp := freePorts(t, "tcp", 7)
	udp := freePorts(t, "udp", 3)
	return jaegerPorts{
		otlpGRPC: tcp[0], otlpHTTP: tcp[1], collGRPC: tcp[2], collHTTP: tcp[3],
		sampling: tcp[4], queryGRPC: tcp[5], queryHTTP: tcp[6],
		binary: udp[0], compact: udp[1], zipkin: udp[2],
	}
}

func (p jaegerPorts) addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func (p jaegerPorts) args(admin int) []string {
	return []string{
		"--memory.max-traces=100000",
		"--collector.otlp.enabled=true",
		"--admin.http.host-port=" + p.addr(admin),
		"--collector.otlp.grpc.host-port=" + p.addr(p.otlpGRPC),
		"--collector.otlp.http.host-port=" + p.addr(p.otlpHTTP),
		"--collector.grpc-server.host-port=" + p.addr(p.collGRPC),
		"--collector.http-server.host-port=" + p.addr(p.collHTTP),
		"--http-server.host-port=" + p.addr(p.sampling),
		"--query.grpc-server.host-port=" + p.addr(p.queryGRPC),
		"--query.http-server.host-port=" + p.addr(p.queryHTTP),
		"--processor.jaeger-binary.server-host-port=" + p.addr(p.binary),
		"--processor.jaeger-compact.server-host-port=" + p.addr(p.compact),
		"--processor.zipkin-compact.server-host-port=" + p.addr(p.zipkin),
		"--reporter.grpc.host-port=" + p.addr(p.collGRPC), // the agent's collector
	}
}

// freePorts returns n distinct ports on 127.0.0.1 of network ("tcp" or
// "udp") that were free a moment ago: all n are held open while picked,
// so none is handed out twice.
func freePorts(t testing.TB, network string, n int) []int {
	t.Helper()
	var ports []int
	var closers []interface{ Close() error }
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for range n {
		if network == "udp" {
			c, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				Unavailable(t, "cannot listen on 127.0.0.1 (udp): %v", err)
				return nil
			}
			closers, ports = append(closers, c), append(ports, c.LocalAddr().(*net.UDPAddr).Port)
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			Unavailable(t, "cannot listen on 127.0.0.1: %v", err)
			return nil
		}
		closers, ports = append(closers, l), append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// jaegerBinary finds all-in-one in PATH, GOBIN or GOPATH/bin.
func jaegerBinary(t testing.TB) string {
	t.Helper()
	return goBinary(t, "all-in-one", JaegerInstall)
}
