package openaidriver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestValidateListsEveryProblem(t *testing.T) {
	hot := 3.0
	c := Config{URL: "ftp://x", Endpoint: "images", MaxTokens: -1, Temperature: &hot, Timeout: -time.Second,
		Headers: map[string]string{"Bad Name": "v", "X-Key": "line\nbreak"}, APIKey: "sk\n"}
	errs := c.Validate()
	want := []string{"scheme must be http or https", "model is required", `endpoint "images" is unknown`,
		"max_tokens -1", "temperature 3", "timeout -1s", `header name "Bad Name"`, `header "X-Key": value is not valid`,
		"api_key is not a valid header value", "prompts or prompts_file is required"}
	for _, w := range want {
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), w)
		}
		if !found {
			t.Errorf("no problem mentions %q; got %v", w, errs)
		}
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), "line\nbreak") || strings.Contains(err.Error(), "sk\n") {
			t.Errorf("a secret shows in %q", err)
		}
	}
}

func TestValidateCases(t *testing.T) {
	base := Config{URL: "http://127.0.0.1:4000", Model: "m", Prompts: []string{"hi"}}
	tests := []struct {
		name   string
		modify func(*Config)
		want   string // "" means valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"prompts file", func(c *Config) { c.Prompts, c.PromptsFile = nil, "testdata/prompts.jsonl" }, ""},
		{"both prompt sources", func(c *Config) { c.PromptsFile = "testdata/prompts.jsonl" }, "give prompts or prompts_file, not both"},
		{"messages to completions", func(c *Config) {
			c.Prompts, c.PromptsFile, c.Endpoint = nil, "testdata/prompts.jsonl", EndpointCompletions
		}, `testdata/prompts.jsonl:1: endpoint completions needs a "prompt", not "messages"`},
		{"streamed embeddings", func(c *Config) { c.Endpoint, c.Stream = EndpointEmbeddings, true }, "embeddings are not streamed"},
		{"no url", func(c *Config) { c.URL = "" }, "url is required"},
		{"no host", func(c *Config) { c.URL = "http://" }, "host is missing"},
		{"query in base", func(c *Config) { c.URL = "http://h/v1?key=sk-1" }, `"http://h/v1?key=xxxxx": give the base URL`},
	}
	for _, tt := range tests {
		c := base
		tt.modify(&c)
		errs := c.Validate()
		switch {
		case tt.want == "" && errs != nil:
			t.Errorf("%s: %v", tt.name, errs)
		case tt.want != "" && (len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, errs, tt.want)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	tests := []struct{ base, endpoint, want string }{
		{"http://127.0.0.1:4000", EndpointChat, "http://127.0.0.1:4000/v1/chat/completions"},
		{"http://127.0.0.1:4000/", EndpointChat, "http://127.0.0.1:4000/v1/chat/completions"},
		{"https://api.example.com/v1", EndpointCompletions, "https://api.example.com/v1/completions"},
		{"https://api.example.com/v1/", EndpointEmbeddings, "https://api.example.com/v1/embeddings"},
		{"http://gw:8080/openai", EndpointChat, "http://gw:8080/openai/v1/chat/completions"},
	}
	for _, tt := range tests {
		u, err := endpointURL(tt.base, tt.endpoint)
		if err != nil || u.String() != tt.want {
			t.Errorf("endpointURL(%q, %s) = %v, %v; want %s", tt.base, tt.endpoint, u, err, tt.want)
		}
	}
}

// Secrets never show in a description, however the Config is printed.
func TestRedacted(t *testing.T) {
	c := Config{URL: "https://user:pw@api.example.com/v1", APIKey: "sk-SECRET", Model: "gpt-x", Stream: true,
		MaxTokens: 64, Prompts: []string{"a", "b"}, Headers: map[string]string{"X-Bf-Vk": "vk-SECRET", "Api-Key": "k-SECRET"}}
	for _, s := range []string{c.Redacted(), c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "SECRET") || strings.Contains(s, "pw") {
			t.Errorf("secret in %q", s)
		}
	}
	want := `openai chat streamed https://user:xxxxx@api.example.com/v1 model "gpt-x", max_tokens 64, 2 prompts, api_key set, headers Api-Key, X-Bf-Vk`
	if got := c.Redacted(); got != want {
		t.Errorf("Redacted() =\n%s\nwant\n%s", got, want)
	}
}

// The YAML tags decode a plan's params, durations as strings.
func TestConfigFromYAML(t *testing.T) {
	const doc = `
url: http://127.0.0.1:4000
api_key: sk-test
model: openai/gpt-4o-mini
endpoint: chat
stream: true
max_tokens: 128
temperature: 0.2
prompts: ["hello", "world"]
timeout: 45s
headers: {X-Bf-Vk: vk-1}
name: through-gateway
`
	var c Config
	if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 45*time.Second || c.Temperature == nil || *c.Temperature != 0.2 || c.MaxTokens != 128 ||
		!c.Stream || len(c.Prompts) != 2 || c.Headers["X-Bf-Vk"] != "vk-1" || c.Name != "through-gateway" || c.APIKey != "sk-test" {
		t.Errorf("decoded %#v, fields: %v %v %v", c, c.Timeout, c.MaxTokens, c.Headers)
	}
	if errs := c.Validate(); errs != nil {
		t.Errorf("decoded config invalid: %v", errs)
	}
	if d := c.withDefaults(); d.Name != "through-gateway" {
		t.Errorf("name default overrode the given name: %q", d.Name)
	}
	if d := (Config{}).withDefaults(); d.Endpoint != EndpointChat || d.Name != "chat" || d.Timeout != DefaultTimeout {
		t.Errorf("defaults: %q %q %v", d.Endpoint, d.Name, d.Timeout)
	}
}
