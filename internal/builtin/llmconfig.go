package builtin

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultLLMModel is the model the mock provider lists and answers as when
// LLMConfig.Model is empty.
const DefaultLLMModel = "perflab-mock"

// DefaultBlockSize is the KV block size in tokens when LLMConfig.BlockSize
// is 0: vLLM's default.
const DefaultBlockSize = 16

// LLMConfig describes how the built-in OpenAI-compatible mock provider
// answers. The zero value answers every request at once with an empty
// completion.
//
// Timing of a completion of n tokens, from the moment the request body was
// read and the request was admitted to the running batch (MaxConcurrency,
// KVBlocks): token i (0-based) is sent at TTFT + i/TokensPerSecond, where
// TTFT is Latency with Jitter drawn from Dist, once per request, plus
// PrefillPerToken for each prompt token not found in the prefix cache. A streamed answer
// sends each token as its own server-sent event at that instant; a
// non-streamed one answers whole when the last token would have been sent.
// Embeddings answer after TTFT.
type LLMConfig struct {
	Model   string        // model id listed by /v1/models; "" means DefaultLLMModel
	Latency time.Duration // time to first token
	Jitter  time.Duration // spread of the time to first token: uniform ±Jitter, or normal with stddev Jitter
	Dist    string        // DistFixed (default without jitter), DistUniform, DistNormal (default with jitter)

	// Tokens is the length of every completion in tokens, where a model
	// would meet its end of sequence: a request's min_tokens makes it
	// longer, ignore_eos as long as its max_tokens, and max_tokens (or
	// max_completion_tokens) caps it.
	Tokens int
	// TokensPerSecond paces the tokens after the first; 0 sends them all at
	// once.
	TokensPerSecond float64

	ErrorRate float64 // fraction [0,1] of admitted requests answered 500, after the time to first token

	// MaxConcurrency answers at most this many requests at once, as a
	// server's batch does: the others wait for a slot, first come first
	// served, and the wait adds to their time to first token. Timing
	// starts when a request has its slot. 0 means no limit.
	MaxConcurrency int

	// KVBlocks models a KV cache of that many blocks of BlockSize tokens
	// (see servingEngine): a running request holds the blocks of its
	// prompt and answer, and waits while they do not fit beside those
	// held; the prompt's full blocks found in the prefix cache need no
	// prefill. 0 means no KV cache model.
	KVBlocks  int
	BlockSize int // tokens per KV block; 0 means DefaultBlockSize
	// PrefillPerToken adds to the time to first token this much per
	// prompt token not found in the prefix cache (every token without
	// KVBlocks), so a prefix hit answers sooner.
	PrefillPerToken time.Duration

	// RateLimit admits at most RateLimit requests in each RateWindow
	// (fixed windows from the start) and answers the others 429 at once.
	// 0 means no limit.
	RateLimit  int
	RateWindow time.Duration

	Seed int64 // 0 = random
}

// Validate lists every problem with the configuration at once; nil means
// the configuration is usable.
func (c LLMConfig) Validate() []error {
	// Latency, jitter, distribution and error rate mean what they mean for
	// the HTTP target, and are checked the same way.
	errs := HTTPConfig{Latency: c.Latency, Jitter: c.Jitter, Dist: c.Dist, ErrorRate: c.ErrorRate}.Validate()
	if c.Tokens < 0 {
		errs = append(errs, fmt.Errorf("tokens %d must be >= 0", c.Tokens))
	}
	if math.IsNaN(c.TokensPerSecond) || math.IsInf(c.TokensPerSecond, 0) || c.TokensPerSecond < 0 {
		errs = append(errs, fmt.Errorf("tokens per second %v must be a number >= 0", c.TokensPerSecond))
	}
	if c.MaxConcurrency < 0 {
		errs = append(errs, fmt.Errorf("max concurrency %d must be >= 0 (0: no limit)", c.MaxConcurrency))
	}
	if c.KVBlocks < 0 {
		errs = append(errs, fmt.Errorf("kv blocks %d must be >= 0 (0: no KV cache model)", c.KVBlocks))
	}
	if c.BlockSize < 0 {
		errs = append(errs, fmt.Errorf("block size %d must be >= 0 (0: %d)", c.BlockSize, DefaultBlockSize))
	}
	if c.PrefillPerToken < 0 {
		errs = append(errs, fmt.Errorf("prefill per token %v must be >= 0", c.PrefillPerToken))
	}
	if c.RateLimit < 0 {
		errs = append(errs, fmt.Errorf("rate limit %d must be >= 0", c.RateLimit))
	}
	if c.RateWindow < 0 {
		errs = append(errs, fmt.Errorf("rate limit window %v must be >= 0", c.RateWindow))
	}
	if c.RateLimit > 0 && c.RateWindow == 0 {
		errs = append(errs, fmt.Errorf("rate limit %d needs a window", c.RateLimit))
	}
	if strings.ContainsAny(c.Model, "\x00\r\n") {
		errs = append(errs, fmt.Errorf("model %q must not contain control characters", c.Model))
	}
	return errs
}

// model is the model id, applying the default.
func (c LLMConfig) model() string {
	if c.Model == "" {
		return DefaultLLMModel
	}
	return c.Model
}

// blockSize is the KV block size, applying the default.
func (c LLMConfig) blockSize() int {
	if c.BlockSize == 0 {
		return DefaultBlockSize
	}
	return c.BlockSize
}

// interval is the time between two tokens; 0 when they are not paced.
func (c LLMConfig) interval() time.Duration {
	if c.TokensPerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / c.TokensPerSecond)
}

// tokenAt is when token i (0-based) of a completion is due, after the
// request was read, given its time to first token.
func tokenAt(i int, ttft, interval time.Duration) time.Duration {
	return ttft + time.Duration(i)*interval
}

// errRateLimitSyntax is wrapped by ParseRateLimit for input not of the
// form "<requests>/<window>".
var errRateLimitSyntax = errors.New(`want <requests>/<window>, e.g. "100/1s" or "100/s"`)

// ParseRateLimit parses a rate limit written "<requests>/<window>", e.g.
// "100/1s" or "6000/1m"; a window without a number ("100/s") means one of
// the unit. The empty string means no limit. Ranges are checked by
// LLMConfig.Validate, not here.
func ParseRateLimit(s string) (requests int, window time.Duration, err error) {
	if s == "" {
		return 0, 0, nil
	}
	nText, wText, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(wText, "/") {
		return 0, 0, fmt.Errorf("cannot parse rate limit %q: %w", s, errRateLimitSyntax)
	}
	requests, err = strconv.Atoi(strings.TrimSpace(nText))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot parse rate limit %q: %w", s, errRateLimitSyntax)
	}
	wText = strings.TrimSpace(wText)
	if wText != "" && (wText[0] < '0' || wText[0] > '9') && wText[0] != '.' {
		wText = "1" + wText
	}
	window, err = time.ParseDuration(wText)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot parse rate limit %q: %w", s, err)
	}
	return requests, window, nil
}
