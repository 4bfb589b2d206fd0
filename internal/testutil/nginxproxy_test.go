package testutil

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nginx as a reverse proxy forwards to the upstream over connections it
// keeps open.
func TestStartNginxProxy(t *testing.T) {
	var conns atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "up "+r.URL.Path)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	base := StartNginxProxy(t, up.URL)
	client := &http.Client{Timeout: 5 * time.Second}
	for range 20 {
		resp, err := client.Get(base + "/v1/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "up /v1/x" {
			t.Fatalf("GET /v1/x through nginx: %d %q", resp.StatusCode, b)
		}
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("nginx opened %d connections to the upstream for 20 sequential requests: no keep-alive", n)
	}
}

func TestNewNginxProxy(t *testing.T) {
	p := NewNginxProxy(t, "http://127.0.0.1:1")
	if p.Port == 0 || len(p.Args) != 8 || p.Args[len(p.Args)-1] != "daemon off;" || !strings.HasPrefix(p.Bin, "/") {
		t.Errorf("proxy %+v", p)
	}
}
