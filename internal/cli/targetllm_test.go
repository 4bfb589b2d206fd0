package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTargetLLMFlagsAreChecked(t *testing.T) {
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"target", "llm", "--addr", "127.0.0.1:0",
		"--rate-limit", "lots", "--tokens", "-1", "--error-rate", "2"}, io.Discard, &stderr)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, &stderr)
	}
	for _, want := range []string{"--rate-limit: cannot parse rate limit", "tokens -1", "error rate 2"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, &stderr)
		}
	}
	stderr.Reset()
	if code := Main(context.Background(), []string{"target", "llm", "--addr", "0.0.0.0:0"}, io.Discard, &stderr); code != ExitUsage ||
		!strings.Contains(stderr.String(), "not a loopback address") {
		t.Errorf("non-loopback address: exit %d, %s", code, &stderr)
	}
}

func TestLLMTargetConfig(t *testing.T) {
	cfg, err := llmTargetConfig(llmFlags{model: "m", latency: 50 * time.Millisecond, tokens: 50,
		tokensPerSecond: 100, errorRate: 0.1, rateLimit: "100/1s", seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimit != 100 || cfg.RateWindow != time.Second || cfg.Tokens != 50 || cfg.TokensPerSecond != 100 ||
		cfg.Latency != 50*time.Millisecond || cfg.ErrorRate != 0.1 || cfg.Model != "m" || cfg.Seed != 1 {
		t.Errorf("config = %+v", cfg)
	}
}

// `perflab target llm` serves the mock provider on loopback until its
// context ends.
func TestTargetLLMServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"target", "llm", "--addr", "127.0.0.1:0", "--tokens", "3", "--model", "tiny"}, w, io.Discard)
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
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"content":"lorem ipsum dolor"`) ||
		!strings.Contains(string(body), `"model":"tiny"`) {
		t.Errorf("answer %d: %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("exit %d after the context ended, want %d", code, ExitOK)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("perflab target llm did not stop")
	}
}
