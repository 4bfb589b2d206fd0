package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/builtin"
)

// llmSummary is what the tests read of perflab llm's JSON summary.
type llmSummary struct {
	Workloads []struct {
		Driver     string  `json:"driver"`
		TargetRate float64 `json:"target_rate"`
		Ops        []struct {
			Requests int64 `json:"requests"`
			OK       int64 `json:"ok"`
			Measures map[string]struct {
				Count int64   `json:"count"`
				P50   float64 `json:"p50"`
			} `json:"measures_ms"`
			Counters map[string]struct {
				Total int64 `json:"total"`
			} `json:"counters"`
			Goodput *struct {
				Judged int64 `json:"judged"`
			} `json:"goodput"`
		} `json:"operations"`
	} `json:"workloads"`
}

// `perflab llm URL --model M --rate 5/s --isl 200 --osl 50 --stream`
// loads the built-in mock on 127.0.0.1 as one openai workload: every
// answer streamed with the 50 tokens asked (ignore_eos makes the mock
// write them), every prompt 200 tokens (the mock counts its words), a
// time to first token of at least the mock's 20 ms per stream, every
// request judged for goodput; the API key from --api-key-env is sent and
// recorded nowhere.
func TestLLMOneLiner(t *testing.T) {
	const key = "sk-perflab-test-0123456789"
	llm := builtin.NewLLM(builtin.LLMConfig{Latency: 20 * time.Millisecond, Tokens: 16, TokensPerSecond: 1000}, time.Now)
	var keyed, unkeyed atomic.Int64 // requests with the key as a bearer token, and without
	mock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+key {
			keyed.Add(1)
		} else {
			unkeyed.Add(1)
		}
		llm.ServeHTTP(w, r)
	}))
	defer mock.Close()
	t.Setenv("PERFLAB_TEST_LLM_KEY", key)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"llm", mock.URL, "--model", "m", "--rate", "5/s", "--isl", "200", "--osl", "50",
		"--ignore-eos", "--stream", "--duration", "3s", "--goodput", "ttft=10s", "--api-key-env", "PERFLAB_TEST_LLM_KEY",
		"--json", "--out", out}, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var s llmSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(s.Workloads) != 1 || s.Workloads[0].Driver != "openai" || s.Workloads[0].TargetRate != 5 || len(s.Workloads[0].Ops) != 1 {
		t.Fatalf("summary %+v, want one openai workload at 5/s", s)
	}
	op := s.Workloads[0].Ops[0]
	if op.OK == 0 || op.OK != op.Requests {
		t.Fatalf("%d requests, %d ok", op.Requests, op.OK)
	}
	if got := op.Counters["output_tokens"].Total; got != 50*op.OK {
		t.Errorf("%d output tokens for %d answers, want 50 each", got, op.OK)
	}
	if got := op.Counters["prompt_tokens"].Total; got != 200*op.OK {
		t.Errorf("%d prompt tokens for %d requests, want 200 each", got, op.OK)
	}
	if ttft := op.Measures["ttft"]; ttft.Count != op.OK || ttft.P50 < 20 {
		t.Errorf("ttft %+v, want one per stream of at least 20 ms", ttft)
	}
	if op.Goodput == nil || op.Goodput.Judged != op.Requests {
		t.Errorf("goodput %+v, want every request judged", op.Goodput)
	}
	if keyed.Load() < op.Requests || unkeyed.Load() != 0 {
		t.Errorf("%d requests with the key as a bearer token, %d without; want all %d of the load with it", keyed.Load(), unkeyed.Load(), op.Requests)
	}
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
				t.Errorf("%s holds the API key", path)
			}
		}
		return nil
	})
}

// Bad flags are refused at once, each problem on a line naming its flag,
// and nothing is started.
func TestLLMFlagsAreChecked(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"llm", "http://127.0.0.1:1", "--rate", "fast", "--goodput", "ttft", "--osl", "-3",
		"--out", out}, &stdout, &stderr)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, stderr.String())
	}
	for _, want := range []string{"--model: model is required", "--isl: give --isl N", `--rate "fast": want an operation rate like 500/s`,
		`--goodput "ttft": want name=duration pairs`, "--osl: output_tokens: mean -3"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a refused run left %d entries in --out", len(entries))
	}
	if code := Main(context.Background(), []string{"llm", "--model", "m"}, &stdout, &stderr); code != ExitUsage {
		t.Errorf("no URL: exit %d, want %d", code, ExitUsage)
	}
}
