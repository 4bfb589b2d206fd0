package openaidriver

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/secret"
)

// The endpoints Config.Endpoint names.
const (
	EndpointChat        = "chat"        // POST /v1/chat/completions
	EndpointCompletions = "completions" // POST /v1/completions
	EndpointEmbeddings  = "embeddings"  // POST /v1/embeddings
)

// DefaultTimeout bounds one request, streamed answer included, when
// Config.Timeout is zero. Generating a long answer takes a while.
const DefaultTimeout = 2 * time.Minute

// Config describes the requests a Driver sends. It decodes from YAML as it
// is: durations are time.Duration fields, which the YAML decoder reads from
// strings like "30s" (no custom type needed); ${ENV} references, for
// api_key and headers, are substituted by the plan loader before decoding.
type Config struct {
	// URL is the API's base, e.g. http://127.0.0.1:4000: requests go to
	// URL + "/v1/chat/completions", or URL + "/chat/completions" when URL
	// already ends in /v1.
	URL      string `yaml:"url"`
	APIKey   string `yaml:"api_key"`  // sent as "Authorization: Bearer <key>"; never shown (see Redacted)
	Model    string `yaml:"model"`    // required
	Endpoint string `yaml:"endpoint"` // EndpointChat (default), EndpointCompletions or EndpointEmbeddings
	// Stream asks for the answer as server-sent events, with usage
	// (stream_options.include_usage). Not for embeddings.
	Stream      bool     `yaml:"stream"`
	MaxTokens   int      `yaml:"max_tokens"`  // sent as max_tokens when > 0
	Temperature *float64 `yaml:"temperature"` // sent when set

	// Prompts are sent in turn, one per request, across all VUs: as the
	// user message (chat), the prompt (completions) or the input
	// (embeddings). Give them inline or in PromptsFile, not both.
	Prompts []string `yaml:"prompts"`
	// PromptsFile is a file of prompts in PromptsFormat: FormatJSONL (the
	// default), one per line, each {"messages": [...]} (chat only; the
	// messages are sent as they are) or {"prompt": "..."}, see
	// ParsePrompts; or FormatShareGPT, see ParseShareGPT.
	PromptsFile   string `yaml:"prompts_file"`
	PromptsFormat string `yaml:"prompts_format"`

	// InputTokens makes each prompt instead: generated text of that many
	// tokens, about one a word (see vocabulary), drawn per request.
	InputTokens *Lengths `yaml:"input_tokens"`
	// OutputTokens asks each request for that many output tokens, drawn
	// per request, as max_tokens (instead of MaxTokens).
	OutputTokens *Lengths `yaml:"output_tokens"`
	// IgnoreEOS sends, besides max_tokens, min_tokens equal to it and
	// "ignore_eos": true, which vLLM and SGLang take, so that the server
	// writes exactly the tokens asked for rather than stopping at its end
	// of sequence. OpenAI's own API rejects them: leave it off there.
	IgnoreEOS bool `yaml:"ignore_eos"`
	// Seed draws the synthetic prompts and the lengths: request i of a run
	// (in the order they are sent, across VUs) is the same for the same
	// seed. 0 picks one at random, which the facts tell.
	Seed int64 `yaml:"seed"`
	// SharedPrefix starts a share of the requests with one of a few
	// system prompts (see SharedPrefix).
	SharedPrefix *SharedPrefix `yaml:"shared_prefix"`
	// Conversation makes each VU hold conversations (see Conversation):
	// each turn is its own operation, "<name> turn <n>".
	Conversation *Conversation `yaml:"conversation"`
	// Trace replays a timed trace (see Trace): the workload's arrivals
	// and requests are the trace's.
	Trace *Trace `yaml:"trace"`
	// Goodput are the bounds a request must meet to count toward goodput.
	Goodput *Goodput `yaml:"goodput"`

	Timeout time.Duration     `yaml:"timeout"` // whole request, answer included; 0 means DefaultTimeout
	Headers map[string]string `yaml:"headers"` // extra request headers, e.g. a gateway's key; values never shown
	Name    string            `yaml:"name"`    // operation name; default the endpoint ("chat", ...)
}

// ParamKeys declares which params say where the API is (url and the
// credentials) and which hold credentials.
func (Config) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{
		Place:   []string{"url", "api_key", "headers"},
		Secret:  []string{"api_key"},
		Headers: []string{"headers"},
	}
}

// withDefaults fills in every default in one place.
func (c Config) withDefaults() Config {
	if c.Endpoint == "" {
		c.Endpoint = EndpointChat
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PromptsFormat == "" {
		c.PromptsFormat = FormatJSONL
	}
	if c.Name == "" {
		c.Name = c.Endpoint
	}
	return c
}

// Validate reports every problem with c at once, reading PromptsFile to
// check each line; nil means New will accept c.
func (c Config) Validate() []error {
	_, errs := c.check()
	return errs
}

// inputs are what c's requests are made of, read once when c is checked:
// its prompts, or the requests of the trace it replays.
type inputs struct {
	prompts []Prompt
	trace   []TraceRequest
}

// check validates c and returns its inputs.
func (c Config) check() (inputs, []error) {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	if _, err := endpointURL(c.URL, EndpointChat); err != nil {
		errs = append(errs, driver.WithKey("url", err))
	}
	if c.Model == "" {
		add("model", "model is required")
	}
	switch c.Endpoint {
	case "", EndpointChat, EndpointCompletions:
	case EndpointEmbeddings:
		if c.Stream {
			add("stream", "stream: embeddings are not streamed")
		}
	default:
		add("endpoint", "endpoint %q is unknown (want %s, %s or %s)", c.Endpoint, EndpointChat, EndpointCompletions, EndpointEmbeddings)
	}
	if c.MaxTokens < 0 {
		add("max_tokens", "max_tokens %d is negative", c.MaxTokens)
	}
	if t := c.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		add("temperature", "temperature %v must be between 0 and 2", *t)
	}
	if c.Timeout < 0 {
		add("timeout", "timeout %v is negative", c.Timeout)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
		if !httpguts.ValidHeaderFieldName(name) {
			add("headers", "header name %q is not valid", name)
		} else if !httpguts.ValidHeaderFieldValue(c.Headers[name]) {
			add("headers", "header %q: value is not valid", name) // the value may be a secret
		}
	}
	if !httpguts.ValidHeaderFieldValue(c.APIKey) {
		add("api_key", "api_key is not a valid header value")
	}
	errs = append(errs, c.synthetic()...)
	if c.Trace != nil {
		trace, terrs := c.Trace.problems(c)
		return inputs{trace: trace}, append(errs, terrs...)
	}
	prompts, perrs := c.prompts()
	return inputs{prompts: prompts}, append(errs, perrs...)
}

// synthetic checks the lengths, goodput and what goes with them.
func (c Config) synthetic() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	errs = append(errs, c.InputTokens.problems("input_tokens")...)
	errs = append(errs, c.OutputTokens.problems("output_tokens")...)
	errs = append(errs, c.Goodput.problems(c.Stream)...)
	errs = append(errs, c.SharedPrefix.problems()...)
	errs = append(errs, c.Conversation.problems(c)...)
	if c.OutputTokens != nil && c.MaxTokens > 0 {
		add("output_tokens", "give max_tokens or output_tokens, not both")
	}
	if c.Endpoint == EndpointEmbeddings {
		for key, set := range map[string]bool{"output_tokens": c.OutputTokens != nil, "ignore_eos": c.IgnoreEOS, "goodput": c.Goodput != nil} {
			if set {
				add(key, "%s: embeddings have no output tokens", key)
			}
		}
	}
	if c.IgnoreEOS && c.OutputTokens == nil && c.MaxTokens == 0 && c.Trace == nil {
		add("ignore_eos", "ignore_eos needs output_tokens or max_tokens: the length to write")
	}
	switch c.PromptsFormat {
	case "", FormatJSONL:
	case FormatShareGPT:
		if c.PromptsFile == "" {
			add("prompts_format", "prompts_format %s is the format of a prompts_file, and none is given", c.PromptsFormat)
		}
	default:
		add("prompts_format", "prompts_format %q is unknown (want %s or %s)", c.PromptsFormat, FormatJSONL, FormatShareGPT)
	}
	return errs
}

// prompts gathers the prompts and checks that the endpoint can send each.
func (c Config) prompts() ([]Prompt, []error) {
	var prompts []Prompt
	var errs []error
	switch {
	case c.InputTokens != nil && (len(c.Prompts) > 0 || c.PromptsFile != ""):
		return nil, []error{driver.ParamErrorf("input_tokens", "give input_tokens, prompts or prompts_file: input_tokens makes the prompts")}
	case c.InputTokens != nil:
		return nil, nil
	case len(c.Prompts) > 0 && c.PromptsFile != "":
		return nil, []error{driver.ParamErrorf("prompts", "give prompts or prompts_file, not both")}
	case c.PromptsFile != "" && c.PromptsFormat == FormatShareGPT:
		prompts, errs = LoadShareGPT(c.PromptsFile)
		for i, err := range errs {
			errs[i] = driver.WithKey("prompts_file", err)
		}
	case c.PromptsFile != "":
		prompts, errs = LoadPrompts(c.PromptsFile)
		for i, err := range errs {
			errs[i] = driver.WithKey("prompts_file", err)
		}
	case len(c.Prompts) > 0:
		for _, p := range c.Prompts {
			prompts = append(prompts, Prompt{Text: p})
		}
	default:
		return nil, []error{driver.ParamErrorf("", "prompts or prompts_file is required, or input_tokens to make them")}
	}
	if c.Endpoint != "" && c.Endpoint != EndpointChat {
		for _, p := range prompts {
			if p.Messages != nil {
				errs = append(errs, driver.ParamErrorf("endpoint", "%s:%d: endpoint %s needs a \"prompt\", not \"messages\"", c.PromptsFile, p.Line, c.Endpoint))
			}
		}
	}
	if len(errs) > maxPromptErrors {
		errs = append(errs[:maxPromptErrors], driver.ParamErrorf("prompts_file", "... and %d more problems with prompts", len(errs)-maxPromptErrors))
	}
	return prompts, errs
}

// endpointURL is the URL requests to endpoint go to, from the base URL.
func endpointURL(base, endpoint string) (*url.URL, error) {
	u, err := url.Parse(base)
	switch {
	case base == "":
		return nil, fmt.Errorf("url is required")
	case err != nil:
		return nil, fmt.Errorf("cannot parse url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("url %q: scheme must be http or https", secret.URL(base))
	case u.Host == "":
		return nil, fmt.Errorf("url %q: host is missing", secret.URL(base))
	case driver.BadPort(u) != "":
		return nil, fmt.Errorf("url %q: %s", secret.URL(base), driver.BadPort(u))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("url %q: give the base URL, without query or fragment", secret.URL(base))
	}
	path := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(path, "/v1") {
		path += "/v1"
	}
	v := *u
	v.Path, v.RawPath = path+"/"+map[string]string{
		EndpointChat: "chat/completions", EndpointCompletions: "completions", EndpointEmbeddings: "embeddings",
	}[endpoint], ""
	return &v, nil
}

// Redacted describes c in one line, for logs and reports, without any
// secret: the URL as secret.URL shows it, the model and the request's shape;
// whether an API key is set, but not the key; header names, not their
// values. It works on an invalid Config too.
func (c Config) Redacted() string {
	c = c.withDefaults()
	var b strings.Builder
	b.WriteString("openai " + c.Endpoint)
	if c.Stream {
		b.WriteString(" streamed")
	}
	b.WriteString(" " + secret.URL(c.URL))
	b.WriteString(" model " + strconv.Quote(c.Model))
	if c.MaxTokens > 0 {
		b.WriteString(", max_tokens " + strconv.Itoa(c.MaxTokens))
	}
	if c.Temperature != nil {
		b.WriteString(", temperature " + strconv.FormatFloat(*c.Temperature, 'g', -1, 64))
	}
	switch {
	case c.Trace != nil:
		b.WriteString(fmt.Sprintf(", trace %s at speedup %v", c.Trace.File, c.Trace.speedup()))
	case c.InputTokens != nil:
		b.WriteString(", input_tokens " + c.InputTokens.String())
	case c.PromptsFile != "" && c.PromptsFormat != FormatJSONL:
		b.WriteString(", prompts from " + c.PromptsFile + " (" + c.PromptsFormat + ")")
	case c.PromptsFile != "":
		b.WriteString(", prompts from " + c.PromptsFile)
	default:
		b.WriteString(", " + strconv.Itoa(len(c.Prompts)) + " prompts")
	}
	if c.OutputTokens != nil {
		b.WriteString(", output_tokens " + c.OutputTokens.String())
	}
	if c.IgnoreEOS {
		b.WriteString(", ignore_eos")
	}
	if c.SharedPrefix != nil {
		b.WriteString(", shared prefixes " + c.SharedPrefix.String())
	}
	if v := c.Conversation; v != nil {
		b.WriteString(fmt.Sprintf(", conversations of %d turns, think time %v", v.Turns, v.ThinkTime))
	}
	if c.APIKey != "" {
		b.WriteString(", api_key set")
	}
	if len(c.Headers) > 0 {
		b.WriteString(", headers " + strings.Join(slices.Sorted(maps.Keys(c.Headers)), ", "))
	}
	return b.String()
}

// String is Redacted, so that printing a Config never shows a secret.
func (c Config) String() string { return c.Redacted() }

// GoString is Redacted too, for %#v.
func (c Config) GoString() string { return "openaidriver.Config{" + c.Redacted() + "}" }
