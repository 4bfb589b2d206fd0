package builtin

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The answers of the mock provider, whole or streamed, and its errors, in
// the shapes of the OpenAI API.

type llmUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

func (c *completion) usageOf() llmUsage {
	return llmUsage{Prompt: c.prompt, Completion: c.tokens, Total: c.prompt + c.tokens}
}

// object is the "object" of an answer, or of one chunk of it when streamed.
func (c *completion) object(chunk bool) string {
	switch {
	case c.endpoint == endpointCompletions:
		return "text_completion"
	case chunk:
		return "chat.completion.chunk"
	}
	return "chat.completion"
}

func (c *completion) fullID() string {
	if c.endpoint == endpointCompletions {
		return "cmpl-" + c.id
	}
	return "chatcmpl-" + c.id
}

// text is the completion's text: its tokens, concatenated.
func (l *LLM) text(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.words[i%len(l.words)])
	}
	return b.String()
}

// writeCompletion answers a non-streamed completion whole.
func (l *LLM) writeCompletion(w http.ResponseWriter, c *completion) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type choice struct {
		Index   int      `json:"index"`
		Message *message `json:"message,omitempty"`
		Text    *string  `json:"text,omitempty"`
		Finish  string   `json:"finish_reason"`
	}
	text := l.text(c.tokens)
	ch := choice{Finish: c.finish}
	if c.endpoint == endpointCompletions {
		ch.Text = &text
	} else {
		ch.Message = &message{Role: "assistant", Content: text}
	}
	l.writeJSON(w, http.StatusOK, struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   llmUsage `json:"usage"`
	}{c.fullID(), c.object(false), c.created, c.model, []choice{ch}, c.usageOf()})
}

// writeEmbeddings answers an embeddings request with one vector.
func (l *LLM) writeEmbeddings(w http.ResponseWriter, c *completion) {
	type embedding struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	type usage struct {
		Prompt int `json:"prompt_tokens"`
		Total  int `json:"total_tokens"`
	}
	vec := make([]float64, embeddingDims)
	for i := range vec {
		vec[i] = float64(i+1) / embeddingDims
	}
	l.writeJSON(w, http.StatusOK, struct {
		Object string      `json:"object"`
		Data   []embedding `json:"data"`
		Model  string      `json:"model"`
		Usage  usage       `json:"usage"`
	}{"list", []embedding{{"embedding", 0, vec}}, c.model, usage{c.prompt, c.prompt}})
}

// writeError answers an error in the OpenAI shape:
// {"error": {"message", "type", "code"}}.
func (l *LLM) writeError(w http.ResponseWriter, status int, kind, msg string) {
	type apiError struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	}
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	if status == http.StatusTooManyRequests {
		code = "rate_limit_exceeded"
	}
	l.writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: kind, Code: code}})
}

// writeJSON writes v as the whole answer and counts it.
func (l *LLM) writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v) // cannot fail: plain structs
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	n, _ := w.Write(body)
	l.metrics.answered(status, n)
}

// stream sends a completion as server-sent events: the status and headers
// at once, each token as one chunk when it is due (see LLMConfig), a last
// chunk with the finish reason, a usage chunk when the request asked for
// it, and "data: [DONE]". It reports whether it ran to the end. began is
// the request's arrival, from which vLLM's TTFT histogram counts; t0 the
// admission, from which the tokens are timed.
func (l *LLM) stream(ctx context.Context, w http.ResponseWriter, c *completion, began, t0 time.Time, ttft time.Duration) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	sent := 0
	send := func(b []byte) bool {
		n, err := w.Write(b)
		sent += n
		if flusher != nil {
			flusher.Flush()
		}
		return err == nil
	}
	defer func() { l.metrics.answered(http.StatusOK, sent) }()
	if !send(nil) {
		return false
	}
	wt := l.clock.waiter()
	defer wt.close()
	prefix := l.chunkPrefix(c)
	buf := make([]byte, 0, 256)
	for i := range c.tokens {
		if !wt.until(ctx, t0.Add(tokenAt(i, ttft, l.interval))) || !send(l.appendToken(buf[:0], prefix, c, i)) {
			return false
		}
		if i == 0 {
			now := l.clock.now()
			l.metrics.ttft.Observe(now.Sub(t0).Seconds())
			l.metrics.serverTTFT.Observe(now.Sub(began).Seconds())
		}
	}
	if c.tokens == 0 && !wt.until(ctx, t0.Add(ttft)) {
		return false
	}
	if !send(l.appendFinish(buf[:0], prefix, c)) {
		return false
	}
	if c.usage && !send(l.usageChunk(c)) {
		return false
	}
	return send([]byte("data: [DONE]\n\n"))
}

// chunkPrefix is the start of every chunk of c, up to the choice's fields.
func (l *LLM) chunkPrefix(c *completion) []byte {
	model, _ := json.Marshal(c.model)
	b := []byte(`data: {"id":"` + c.fullID() + `","object":"` + c.object(true) + `","created":`)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, model...)
	return append(b, `,"choices":[{"index":0,`...)
}

// appendToken appends the chunk carrying token i.
func (l *LLM) appendToken(b, prefix []byte, c *completion, i int) []byte {
	b = append(b, prefix...)
	tok := l.quoted[i%len(l.quoted)]
	if i == 0 {
		tok = append([]byte{'"'}, tok[2:]...) // no space before the first word
	}
	switch {
	case c.endpoint == endpointCompletions:
		b = append(b, `"text":`...)
	case i == 0:
		b = append(b, `"delta":{"role":"assistant","content":`...)
	default:
		b = append(b, `"delta":{"content":`...)
	}
	b = append(b, tok...)
	if c.endpoint == endpointChat {
		b = append(b, '}')
	}
	return append(b, ",\"finish_reason\":null}]}\n\n"...)
}

// appendFinish appends the last chunk: no content, the finish reason.
func (l *LLM) appendFinish(b, prefix []byte, c *completion) []byte {
	b = append(b, prefix...)
	if c.endpoint == endpointCompletions {
		b = append(b, `"text":""`...)
	} else {
		b = append(b, `"delta":{}`...)
	}
	return append(b, `,"finish_reason":"`+c.finish+"\"}]}\n\n"...)
}

// usageChunk is the chunk stream_options.include_usage asks for: no
// choices, the usage.
func (l *LLM) usageChunk(c *completion) []byte {
	b, _ := json.Marshal(struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []int    `json:"choices"`
		Usage   llmUsage `json:"usage"`
	}{c.fullID(), c.object(true), c.created, c.model, []int{}, c.usageOf()})
	return append(append([]byte("data: "), b...), "\n\n"...)
}
