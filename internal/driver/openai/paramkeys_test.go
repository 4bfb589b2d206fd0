package openaidriver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key of the field it is about; a prompts file's problems carry
// prompts_file, and no prompts at all is the whole config's.
func TestProblemsCarryTheirKey(t *testing.T) {
	many := filepath.Join(t.TempDir(), "many.jsonl")
	if err := os.WriteFile(many, []byte(strings.Repeat("{}\n", maxPromptErrors+3)), 0o644); err != nil {
		t.Fatal(err)
	}
	hot := 3.0
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"url", func(c *Config) { c.URL = "" }},
		{"url", func(c *Config) { c.URL = "ftp://x" }},
		{"url", func(c *Config) { c.URL = "http://h/v1?key=sk-1" }},
		{"model", func(c *Config) { c.Model = "" }},
		{"stream", func(c *Config) { c.Endpoint, c.Stream = EndpointEmbeddings, true }},
		{"endpoint", func(c *Config) { c.Endpoint = "images" }},
		{"endpoint", func(c *Config) {
			c.Prompts, c.PromptsFile, c.Endpoint = nil, "testdata/prompts.jsonl", EndpointCompletions
		}},
		{"max_tokens", func(c *Config) { c.MaxTokens = -1 }},
		{"temperature", func(c *Config) { c.Temperature = &hot }},
		{"timeout", func(c *Config) { c.Timeout = -1 }},
		{"headers", func(c *Config) { c.Headers = map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"} }},
		{"api_key", func(c *Config) { c.APIKey = "sk\n" }},
		{"prompts", func(c *Config) { c.PromptsFile = "testdata/prompts.jsonl" }},
		{"prompts_file", func(c *Config) { c.Prompts, c.PromptsFile = nil, "testdata/bad.jsonl" }},
		{"prompts_file", func(c *Config) { c.Prompts, c.PromptsFile = nil, "/nonexistent/prompts.jsonl" }},
		{"prompts_file", func(c *Config) { c.Prompts, c.PromptsFile = nil, many }},
		{"", func(c *Config) { c.Prompts = nil }},
	} {
		c := Config{URL: "http://127.0.0.1:4000", Model: "m", Prompts: []string{"hi"}}
		tc.modify(&c)
		errs := c.Validate()
		if len(errs) == 0 {
			t.Errorf("%s: no problem with %+v", tc.key, c)
		}
		for _, err := range errs {
			if k := driver.KeyOf(err); k != tc.key {
				t.Errorf("%q carries key %q, want %q", err, k, tc.key)
			}
		}
	}
}
