package testutil

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStartVictoriaMetrics(t *testing.T) {
	t.Parallel()
	base := StartVictoriaMetrics(t)
	if code, body := get(t, base+"/api/v1/query?query=1"); code != 200 || !strings.Contains(body, `"status":"success"`) {
		t.Errorf("query: %d %s", code, body)
	}
}

func TestStartPrometheus(t *testing.T) {
	t.Parallel()
	base := StartPrometheus(t)
	if code, body := get(t, base+"/api/v1/query?query=1"); code != 200 || !strings.Contains(body, `"status":"success"`) {
		t.Errorf("query: %d %s", code, body)
	}
}

func TestStartServerBadFlag(t *testing.T) {
	RequireBinary(t, "victoria-metrics")
	f := &fakeTB{TB: t}
	if url := StartVictoriaMetrics(f, "-no.such.flag=1"); url != "" || !strings.Contains(f.fatal, "no.such.flag") {
		t.Errorf("bad flag: url %q, fatal %q; want the server's complaint", url, f.fatal)
	}
}
