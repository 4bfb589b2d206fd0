package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTargetGatewayFlagsAreChecked(t *testing.T) {
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"target", "gateway", "--addr", "127.0.0.1:0",
		"--upstream", "http://upstream.invalid:80", "--delay", "-1ms"}, io.Discard, &stderr)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, &stderr)
	}
	for _, want := range []string{"delay -1ms must be >= 0", "not a loopback address"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, &stderr)
		}
	}
	stderr.Reset()
	if code := Main(context.Background(), []string{"target", "gateway"}, io.Discard, &stderr); code != ExitUsage ||
		!strings.Contains(stderr.String(), "upstream URL is required") {
		t.Errorf("no upstream: exit %d, %s", code, &stderr)
	}
}

// `perflab target gateway` forwards to its upstream until its context ends.
func TestTargetGatewayServes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "up "+r.URL.Path) }))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"target", "gateway", "--addr", "127.0.0.1:0", "--upstream", up.URL, "--delay", "1ms"}, w, io.Discard)
		w.Close()
		exit <- code
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, out) }()
	_, rest, ok := strings.Cut(line, "listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q, %v", line, err)
	}
	base, _, _ := strings.Cut(rest, " ")
	resp, err := http.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "up /x" {
		t.Errorf("answer %d %q", resp.StatusCode, body)
	}
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("exit %d after the context ended, want %d", code, ExitOK)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("perflab target gateway did not stop")
	}
}
