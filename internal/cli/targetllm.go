package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/builtin"
)

// llmFlags are the flags of `perflab target llm`.
type llmFlags struct {
	addr, model, dist, rateLimit string
	latency, jitter, prefill     time.Duration
	tokens, maxConcurrency       int
	kvBlocks, blockSize          int
	tokensPerSecond, errorRate   float64
	seed                         int64
}

// targetLLM serves the built-in OpenAI-compatible mock provider until
// interrupted.
func (e *env) targetLLM(ctx context.Context, args []string) error {
	var f llmFlags
	fs := newFlagSet("target llm", e)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8000", "loopback address to listen on (127.0.0.1:0 picks a free port)")
	fs.StringVar(&f.model, "model", builtin.DefaultLLMModel, "model id listed by /v1/models")
	fs.DurationVar(&f.latency, "latency", 0, "time to first token")
	fs.DurationVar(&f.jitter, "jitter", 0, "spread of the time to first token (uniform ± or normal stddev)")
	fs.StringVar(&f.dist, "dist", "", "distribution of the time to first token: fixed, uniform or normal (default: fixed without jitter, normal with)")
	fs.IntVar(&f.tokens, "tokens", 16, "completion length in tokens, where the answer ends (a request's min_tokens lengthens it, ignore_eos makes it max_tokens, max_tokens caps it)")
	fs.IntVar(&f.maxConcurrency, "max-concurrency", 0, "answer at most N requests at once; the others wait their turn (0: no limit)")
	fs.IntVar(&f.kvBlocks, "kv-blocks", 0, "model a KV cache of N blocks: running requests hold their blocks, the rest wait; a prompt prefix found in it skips its prefill (0: none)")
	fs.IntVar(&f.blockSize, "block-size", builtin.DefaultBlockSize, "tokens per KV cache block")
	fs.DurationVar(&f.prefill, "prefill-per-token", 0, "time to first token added per prompt token not found in the prefix cache")
	fs.Float64Var(&f.tokensPerSecond, "tokens-per-second", 0, "pace of the tokens after the first (0: all at once)")
	fs.Float64Var(&f.errorRate, "error-rate", 0, "fraction of admitted requests answered 500 after the time to first token, 0..1")
	fs.StringVar(&f.rateLimit, "rate-limit", "", "admit N requests per window and answer the rest 429, e.g. 100/1s (default: no limit)")
	fs.Int64Var(&f.seed, "seed", 0, "random seed (0: random)")
	if err := fs.Parse(args); err != nil {
		return e.flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("perflab target llm takes no arguments, got %q", fs.Args())
	}
	cfg, err := llmTargetConfig(f)
	if err != nil {
		return err
	}
	ln, err := builtin.ListenLoopback(f.addr)
	if err != nil {
		return usageErrorf("%v", err)
	}
	stop, _, release := e.signals(ctx)
	defer release()
	fmt.Fprintf(e.stdout, "perflab target llm listening on http://%s (OpenAI-compatible: /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models)\n", ln.Addr())
	return builtin.Serve(stop, ln, builtin.NewLLM(cfg, time.Now))
}

// llmTargetConfig turns the flags into a configuration, reporting every
// problem at once.
func llmTargetConfig(f llmFlags) (builtin.LLMConfig, error) {
	var problems []string
	cfg := builtin.LLMConfig{Model: f.model, Latency: f.latency, Jitter: f.jitter, Dist: f.dist,
		Tokens: f.tokens, TokensPerSecond: f.tokensPerSecond, ErrorRate: f.errorRate, MaxConcurrency: f.maxConcurrency, Seed: f.seed,
		KVBlocks: f.kvBlocks, BlockSize: f.blockSize, PrefillPerToken: f.prefill}
	var err error
	if cfg.RateLimit, cfg.RateWindow, err = builtin.ParseRateLimit(f.rateLimit); err != nil {
		problems = append(problems, "--rate-limit: "+err.Error())
	}
	for _, err := range cfg.Validate() {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return cfg, usageErrorf("invalid target:\n  %s", strings.Join(problems, "\n  "))
	}
	return cfg, nil
}
