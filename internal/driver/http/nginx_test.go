package httpdriver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// TestAgainstNginx drives a real nginx on every client path: a static
// file, a POST with a body, a 404 with a body of its own (nginx's page
// names its version), all on one keep-alive connection.
func TestAgainstNginx(t *testing.T) {
	static := t.TempDir()
	file := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	if err := os.WriteFile(filepath.Join(static, "1k"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	base := testutil.StartNginx(t, fmt.Sprintf(`
        location /static/ { alias %s/; }
        location = /upload { client_max_body_size 1m; return 201 "created\n"; }
        location = /missing { return 404 "no such thing\n"; }`, static))
	body := bytes.Repeat([]byte("p"), 64<<10)
	for _, path := range []struct {
		name     string
		maxConns int
		viaLoop  bool
	}{{"conn", 0, false}, {"nethttp", 4, false}, {"loop", 0, true}} {
		t.Run(path.name, func(t *testing.T) {
			for _, tc := range []struct {
				c          Config
				class      stats.Class
				recv, sent int64
				msg        string
			}{
				{Config{URL: base + "/static/1k"}, stats.OK, 1024, 0, ""},
				{Config{URL: base + "/upload", Method: http.MethodPost, Body: body}, stats.OK, 8, 64 << 10, ""},
				{Config{URL: base + "/missing"}, stats.Status4xx, -1, 0, "HTTP 404 Not Found: no such thing"},
			} {
				tc.c.MaxConns, tc.c.viaLoop = path.maxConns, path.viaLoop
				d := newDriver(t, tc.c)
				connects := 0
				for i := range 200 {
					r, _ := do(context.Background(), d, 0)
					if r.Class != tc.class || r.Message != tc.msg || r.BytesSent != tc.sent || (tc.recv >= 0 && r.Counters[stats.BodyBytes] != tc.recv) {
						t.Fatalf("%s %s, request %d: %+v", tc.c.Method, tc.c.URL, i, r)
					}
					if r.Connect > 0 {
						connects++
					}
				}
				if connects != 1 {
					t.Errorf("%s: 200 requests opened %d connections, want 1 (keep-alive)", tc.c.URL, connects)
				}
			}
		})
	}
}
