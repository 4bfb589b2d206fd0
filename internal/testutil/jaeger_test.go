package testutil

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStartJaeger(t *testing.T) {
	grpcAddr, otlpHTTP, queryURL := StartJaeger(t)
	if c, err := net.DialTimeout("tcp", grpcAddr, time.Second); err != nil {
		t.Errorf("OTLP/gRPC %s: %v", grpcAddr, err)
	} else {
		c.Close()
	}
	for _, u := range []string{otlpHTTP, queryURL} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("URL %q is not on 127.0.0.1", u)
		}
	}
	code, body := get(t, queryURL+"/api/services")
	if code != http.StatusOK || !strings.Contains(body, `"data"`) {
		t.Errorf("GET /api/services: %d %s", code, body)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	for _, network := range []string{"tcp", "udp"} {
		ports := freePorts(t, network, 10)
		seen := map[int]bool{}
		for _, p := range ports {
			if seen[p] || p == 0 {
				t.Errorf("%s: port %d repeated or zero in %v", network, p, ports)
			}
			seen[p] = true
		}
	}
}
