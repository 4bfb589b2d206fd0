package s3driver

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

func s3Error(status int, code, msg string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		// Read the body first, as S3 servers do: answering a PUT while its
		// 1 MiB body is still being sent races the client's write against
		// the server closing the connection, and the test could time out.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
		return true
	}
}

// TestClassify covers the classes a real server is hard to make produce.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     string
		answer func(w http.ResponseWriter, r *http.Request) bool
		class  stats.Class
		msg    string
	}{
		{"slow down", "put", s3Error(503, "SlowDown", "Please reduce your request rate."), stats.RateLimited, "SlowDown (HTTP 503): Please reduce"},
		{"too many requests", "get", s3Error(429, "TooManyRequests", "x"), stats.RateLimited, "TooManyRequests (HTTP 429)"},
		{"internal error", "get", s3Error(500, "InternalError", "boom"), stats.Status5xx, "InternalError (HTTP 500): boom"},
		{"access denied on HEAD", "head", s3Error(403, "AccessDenied", ""), stats.Status4xx, "AccessDenied (HTTP 403)"},
		{"redirect", "delete", s3Error(301, "PermanentRedirect", "use another endpoint"), stats.Status4xx, "PermanentRedirect (HTTP 301)"},
		{"stall", "get", func(w http.ResponseWriter, r *http.Request) bool {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
			return true
		}, stats.Timeout, "operation timed out after 200ms"},
		{"no Last-Modified", "get", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Length", "3")
			fmt.Fprint(w, "abc")
			return true
		}, stats.Protocol, "Last-Modified"},
		{"body cut short", "get", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Length", "1000")
			w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
			fmt.Fprint(w, "only a little")
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return true
		}, stats.Protocol, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeS3(t, tc.answer)
			c := fakeConfig(f, map[string]int{tc.op: 1})
			if tc.class == stats.Timeout {
				// Only the stall waits out a timeout: a short one for the
				// other answers would be a timing figure (beside 16 CPU
				// hogs a SlowDown answer once took longer than 200 ms).
				c.Timeout = "200ms"
			}
			d := newDriver(t, c)
			var r driver.Result
			d.Do(context.Background(), 0, &r)
			if r.Class != tc.class || !strings.Contains(r.Message, tc.msg) {
				t.Errorf("%s: %v %q, want %v containing %q", r.Op, r.Class, r.Message, tc.class, tc.msg)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	c := Config{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), Bucket: "bkt", Objects: 1}
	d := newDriver(t, c)
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	if r.Class != stats.Connect || r.Op != "GET" {
		t.Errorf("%s: %v %q, want connect", r.Op, r.Class, r.Message)
	}
}

func TestInterrupted(t *testing.T) {
	f := newFakeS3(t, func(w http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done()
		return true
	})
	d := newDriver(t, fakeConfig(f, map[string]int{"get": 1}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var r driver.Result
	d.Do(ctx, 0, &r)
	if r.Class != stats.Interrupted {
		t.Errorf("%s: %v %q, want interrupted", r.Op, r.Class, r.Message)
	}
}

func TestNegativeVU(t *testing.T) {
	f := newFakeS3(t, nil)
	d := newDriver(t, fakeConfig(f, nil))
	var r driver.Result
	d.Do(context.Background(), -1, &r)
	if r.Class != stats.Protocol || len(f.requests()) != 0 {
		t.Errorf("vu -1: %v %q, %d requests", r.Class, r.Message, len(f.requests()))
	}
}

// TestTLS: an https endpoint whose certificate the system does not trust
// fails as tls; ca_file or insecure make it work.
func TestTLS(t *testing.T) {
	f := &fakeS3{}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted case's handshake errors
	f.StartTLS()
	t.Cleanup(f.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		class stats.Class
	}{
		{"untrusted", func(*Config) {}, stats.TLS},
		{"ca_file", func(c *Config) { c.CAFile = ca }, stats.OK},
		{"insecure", func(c *Config) { c.Insecure = true }, stats.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeConfig(f, map[string]int{"get": 1})
			tc.edit(&c)
			d := newDriver(t, c)
			var r driver.Result
			d.Do(context.Background(), 0, &r)
			if r.Class != tc.class {
				t.Fatalf("%v %q, want %v", r.Class, r.Message, tc.class)
			}
			if r.Class == stats.OK && (r.Connect <= 0 || r.BytesRecv != int64(len(fakeBody))) {
				t.Errorf("connect %v, %d bytes", r.Connect, r.BytesRecv)
			}
			d.Do(context.Background(), 0, &r)
			if r.Class == stats.OK && r.Connect != 0 {
				t.Errorf("second GET opened a connection (%v): keep-alive lost", r.Connect)
			}
		})
	}
}
