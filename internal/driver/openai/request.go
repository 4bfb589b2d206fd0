package openaidriver

import (
	"encoding/json"
	"io"
	"net/http"
)

// UserAgent is sent unless Config.Headers sets User-Agent.
const UserAgent = "perflab"

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// requestBody is the JSON body of one request; the endpoint decides which
// of Messages, Prompt and Input is set.
type requestBody struct {
	Model         string          `json:"model"`
	Messages      json.RawMessage `json:"messages,omitempty"`
	Prompt        *string         `json:"prompt,omitempty"`
	Input         *string         `json:"input,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	MinTokens     int             `json:"min_tokens,omitempty"`
	IgnoreEOS     bool            `json:"ignore_eos,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	StreamOptions *streamOptions  `json:"stream_options,omitempty"`
}

// encodeBody encodes the body of a request of prompt p asking for
// maxTokens (none when 0). c has its defaults.
func encodeBody(c Config, p Prompt, maxTokens int) ([]byte, error) {
	b := requestBody{Model: c.Model}
	switch c.Endpoint {
	case EndpointChat:
		b.Messages = p.Messages
		if b.Messages == nil {
			msgs, err := json.Marshal([]struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			}{{"user", p.Text}})
			if err != nil {
				return nil, err
			}
			b.Messages = msgs
		}
	case EndpointCompletions:
		b.Prompt = &p.Text
	case EndpointEmbeddings:
		b.Input = &p.Text
	}
	if c.Endpoint != EndpointEmbeddings {
		b.MaxTokens, b.Temperature = maxTokens, c.Temperature
		if c.IgnoreEOS {
			b.MinTokens, b.IgnoreEOS = maxTokens, true
		}
		if c.Stream {
			b.Stream, b.StreamOptions = true, &streamOptions{IncludeUsage: true}
		}
	}
	return json.Marshal(b)
}

// buildHeader is the header every request carries: JSON in, JSON or
// server-sent events out, the API key as a bearer token, then
// Config.Headers, which may override any of these. A "Host" entry is
// returned apart: net/http reads it from Request.Host only.
func buildHeader(c Config) (h http.Header, host string) {
	h = http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	}
	h.Set("User-Agent", UserAgent)
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
	for k, v := range c.Headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			host = v
			continue
		}
		h.Set(k, v)
	}
	return h, host
}

// bodyReader is a request body: a bytes.Reader with a no-op Close in one
// allocation, fresh for every request (net/http may still read the
// previous one after RoundTrip returned).
type bodyReader struct {
	b   []byte
	off int
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

func (b *bodyReader) Close() error { return nil }
