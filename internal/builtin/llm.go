package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxLLMRequest bounds a request body the mock provider reads.
const maxLLMRequest = 16 << 20

// vocabulary is what the mock provider says, one word per token, over and
// over: token i is word i mod len, with a space before every word but the
// first.
const vocabulary = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"

// embeddingDims is the length of every embedding the mock returns.
const embeddingDims = 8

// The OpenAI-compatible endpoints the mock provider serves.
const (
	endpointChat        = "chat"
	endpointCompletions = "completions"
	endpointEmbeddings  = "embeddings"
)

// LLM is the built-in OpenAI-compatible mock provider. It serves
// /v1/chat/completions and /v1/completions (streamed as server-sent events
// or whole, with usage), /v1/embeddings and /v1/models, timed as LLMConfig
// says, plus /health and /metrics. Prompt tokens are counted as words.
type LLM struct {
	cfg      LLMConfig
	model    string
	dist     string
	interval time.Duration
	now      func() time.Time
	clock    answerClock // times the answers
	start    time.Time
	rng      *rand.Rand
	limiter  *windowLimiter // nil: no rate limit
	engine   *servingEngine // the running batch, its queue and the KV cache
	ids      atomic.Int64
	words    []string // the vocabulary
	quoted   [][]byte // JSON strings of " "+word, the tokens after the first
	metrics  *llmMetrics
}

var _ http.Handler = (*LLM)(nil)

// NewLLM returns the mock provider for cfg, which should have passed
// Validate. now places requests in the rate-limit windows, which start at
// the handler's creation, and stamps "created"; nil means time.Now. Token
// timing always uses the real monotonic clock (package clock).
func NewLLM(cfg LLMConfig, now func() time.Time) *LLM {
	if now == nil {
		now = time.Now
	}
	l := &LLM{
		cfg:      cfg,
		model:    cfg.model(),
		dist:     HTTPConfig{Jitter: cfg.Jitter, Dist: cfg.Dist}.dist(),
		interval: cfg.interval(),
		now:      now,
		clock:    fineClock{},
		start:    now(),
		rng:      newRand(cfg.Seed),
		words:    strings.Fields(vocabulary),
		metrics:  newLLMMetrics(cfg.model(), cfg.KVBlocks > 0),
	}
	if cfg.RateLimit > 0 && cfg.RateWindow > 0 {
		l.limiter = &windowLimiter{limit: cfg.RateLimit, window: cfg.RateWindow}
	}
	l.engine = newServingEngine(cfg, l.metrics)
	for _, w := range l.words {
		q, _ := json.Marshal(" " + w) // cannot fail for a string
		l.quoted = append(l.quoted, q)
	}
	return l
}

// ServeHTTP routes a request to its endpoint.
func (l *LLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/health":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "OK")
	case "/metrics":
		l.metrics.handler.ServeHTTP(w, r)
	case "/v1/models":
		l.serveModels(w, r)
	case "/v1/chat/completions":
		l.serveAPI(w, r, endpointChat)
	case "/v1/completions":
		l.serveAPI(w, r, endpointCompletions)
	case "/v1/embeddings":
		l.serveAPI(w, r, endpointEmbeddings)
	default:
		l.writeError(w, http.StatusNotFound, "invalid_request_error", "no such endpoint: "+r.URL.Path)
	}
}

func (l *LLM) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		l.writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use GET")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	l.writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: l.model, Object: "model", Created: l.start.Unix(), OwnedBy: "perflab"}}})
}

// llmRequest is what the mock reads of a request; other fields are ignored.
type llmRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	Input               json.RawMessage `json:"input"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// completion is what the mock will answer to one admitted request.
type completion struct {
	endpoint string
	id       string
	created  int64
	model    string
	prompt   int      // prompt tokens (words)
	hashes   []uint64 // of the prompt's full KV blocks (promptTokens)
	tokens   int      // completion tokens
	finish   string   // "stop", or "length" when max_tokens cut it
	stream   bool
	usage    bool // stream: send a usage chunk before [DONE]
}

// serveAPI answers one completion or embeddings request: refused at once
// when malformed or over the rate limit, else after its time to first
// token as an injected 500, or with the answer.
func (l *LLM) serveAPI(w http.ResponseWriter, r *http.Request, endpoint string) {
	began := l.clock.now()
	m := l.metrics
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	if r.Method != http.MethodPost {
		l.writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	c, err := l.parse(http.MaxBytesReader(w, r.Body, maxLLMRequest), endpoint)
	if err != nil {
		l.writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if ok, retry := l.admit(); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		l.writeError(w, http.StatusTooManyRequests, "requests", fmt.Sprintf(
			"rate limit reached: %d requests per %v", l.cfg.RateLimit, l.cfg.RateWindow))
		return
	}
	ctx := r.Context()
	adm, ok := l.engine.admit(ctx, l.engine.blocksFor(c.prompt, c.tokens), c.hashes)
	if !ok {
		m.canceled.Inc()
		return
	}
	defer adm.release()
	m.prefixQueries.Add(float64(c.prompt))
	m.prefixHits.Add(float64(adm.cached))
	t0 := l.clock.now() // the origin of the answer's timing
	fail := l.cfg.ErrorRate > 0 && l.rng.Float64() < l.cfg.ErrorRate
	ttft := sampleLatency(l.rng, l.dist, l.cfg.Latency, l.cfg.Jitter) + l.prefill(c.prompt-adm.cached)
	switch {
	case fail:
		if ok = l.until(ctx, t0.Add(ttft)); ok {
			l.writeError(w, http.StatusInternalServerError, "server_error", "perflab: injected error")
		}
	case endpoint == endpointEmbeddings:
		if ok = l.until(ctx, t0.Add(ttft)); ok {
			l.writeEmbeddings(w, c)
		}
	case c.stream:
		ok = l.stream(ctx, w, c, began, t0, ttft)
	default:
		if ok = l.until(ctx, t0.Add(tokenAt(max(c.tokens-1, 0), ttft, l.interval))); ok {
			l.writeCompletion(w, c)
		}
	}
	if !ok {
		m.canceled.Inc()
		return
	}
	m.prompt.Add(float64(c.prompt))
	if !fail && endpoint != endpointEmbeddings {
		m.completion.Add(float64(c.tokens))
	}
	end := l.clock.now()
	m.duration.Observe(end.Sub(began).Seconds())
	if !fail && endpoint != endpointEmbeddings {
		m.e2e.Observe(end.Sub(began).Seconds())
		if !c.stream {
			m.serverTTFT.Observe(t0.Add(ttft).Sub(began).Seconds())
		}
	}
}

// prefill is the time to compute the KV entries of uncached prompt
// tokens.
func (l *LLM) prefill(uncached int) time.Duration {
	return time.Duration(max(uncached, 0)) * l.cfg.PrefillPerToken
}

// until waits for the one deadline of an answer that is not streamed.
func (l *LLM) until(ctx context.Context, t time.Time) bool {
	w := l.clock.waiter()
	defer w.close()
	return w.until(ctx, t)
}

// parse reads a request and decides the answer's shape.
func (l *LLM) parse(body io.Reader, endpoint string) (*completion, error) {
	var req llmRequest
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return nil, fmt.Errorf("cannot parse request body: %w", err)
	}
	c := &completion{endpoint: endpoint, model: req.Model, tokens: l.cfg.Tokens, finish: "stop",
		stream: req.Stream && endpoint != endpointEmbeddings, usage: req.StreamOptions.IncludeUsage}
	p := newPromptTokens(0)
	if l.cfg.KVBlocks > 0 {
		p = newPromptTokens(l.cfg.blockSize())
	}
	switch endpoint {
	case endpointChat:
		if len(req.Messages) == 0 {
			return nil, fmt.Errorf("messages is required")
		}
		for _, msg := range req.Messages {
			eachWord(msg.Content, p.word)
		}
	case endpointCompletions:
		if len(req.Prompt) == 0 {
			return nil, fmt.Errorf("prompt is required")
		}
		eachWord(req.Prompt, p.word)
	case endpointEmbeddings:
		if len(req.Input) == 0 {
			return nil, fmt.Errorf("input is required")
		}
		eachWord(req.Input, p.word)
	}
	c.prompt, c.hashes = p.n, p.hashes
	var err error
	if c.tokens, c.finish, err = answerLength(l.cfg.Tokens, req); err != nil {
		return nil, err
	}
	if endpoint == endpointEmbeddings {
		c.tokens = 0 // holds no KV blocks for an answer
	}
	if c.model == "" {
		c.model = l.model
	}
	c.id = "perflab-" + strconv.FormatInt(l.ids.Add(1), 10)
	c.created = l.now().Unix()
	return c, nil
}

// answerLength is how many tokens the mock writes for req, and why it
// stops. Its answer ends after Tokens, where a model would meet its end of
// sequence; min_tokens makes it write on past that, and ignore_eos on to
// max_tokens, as vLLM does; max_tokens (or max_completion_tokens) cuts it,
// which finishes it for "length". min_tokens above max_tokens is refused.
func answerLength(tokens int, req llmRequest) (int, string, error) {
	limit := max(req.MaxTokens, req.MaxCompletionTokens)
	switch {
	case req.MinTokens < 0:
		return 0, "", fmt.Errorf("min_tokens %d must be >= 0", req.MinTokens)
	case limit > 0 && req.MinTokens > limit:
		return 0, "", fmt.Errorf("min_tokens %d must be at most max_tokens %d", req.MinTokens, limit)
	case req.IgnoreEOS && limit > 0:
		return limit, "length", nil
	}
	n := max(tokens, req.MinTokens)
	if limit > 0 && limit < n {
		return limit, "length", nil
	}
	return n, "stop", nil
}

// eachWord calls f with each word of the text in a prompt, message
// content or embeddings input: a string, a list of strings, or a list of
// content parts ({"type": "text", "text": ...}). Anything else has none.
func eachWord(raw json.RawMessage, f func(string)) {
	words := func(s string) {
		for w := range strings.FieldsSeq(s) {
			f(w)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		words(s)
		return
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return
	}
	for _, p := range parts {
		var part struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(p, &s) == nil {
			words(s)
		} else if json.Unmarshal(p, &part) == nil {
			words(part.Text)
		}
	}
}

// admit applies the rate limit.
func (l *LLM) admit() (ok bool, retryAfter time.Duration) {
	if l.limiter == nil {
		return true, 0
	}
	return l.limiter.admit(l.now().Sub(l.start))
}

// windowLimiter admits at most limit requests in each fixed window
// [k*window, (k+1)*window) since the start.
type windowLimiter struct {
	limit  int
	window time.Duration
	mu     sync.Mutex
	cur    int64 // index of the current window
	n      int   // requests admitted in it
}

// admit reports whether a request arriving elapsed after the start is
// admitted and, when it is not, how long until the next window.
func (w *windowLimiter) admit(elapsed time.Duration) (bool, time.Duration) {
	idx := int64(max(elapsed, 0) / w.window)
	w.mu.Lock()
	defer w.mu.Unlock()
	if idx != w.cur {
		w.cur, w.n = idx, 0
	}
	if w.n < w.limit {
		w.n++
		return true, 0
	}
	return false, time.Duration(idx+1)*w.window - elapsed
}
