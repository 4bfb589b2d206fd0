package openaidriver

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// Lengths are drawn from the normal distribution given, clamped to
// [min, max]; without a spread every length is the mean.
func TestLengthsSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if n := (Lengths{Mean: 128}).sample(rng); n != 128 {
			t.Fatalf("no spread: %d, want 128", n)
		}
	}
	l := Lengths{Mean: 500, Stddev: 50, Min: 420, Max: 600}
	const runs = 20000
	var sum, sq float64
	low := 0
	for range runs {
		n := l.sample(rng)
		if n < l.Min || n > l.Max {
			t.Fatalf("%d outside [%d, %d]", n, l.Min, l.Max)
		}
		if n == l.Min {
			low++
		}
		sum, sq = sum+float64(n), sq+float64(n)*float64(n)
	}
	mean := sum / runs
	sd := math.Sqrt(sq/runs - mean*mean)
	// clamping at 420 (−1.6 σ) and 600 (+2 σ) moves the mean by about +1 and
	// trims the spread to about 47
	if math.Abs(mean-500) > 3 || sd < 44 || sd > 50 || low < runs*4/100 || low > runs*7/100 {
		t.Errorf("mean %.1f, stddev %.1f, %d at min: want about 500, 47 and 5.5 %% clamped", mean, sd, low)
	}
	if n := (Lengths{Mean: 3, Stddev: 100}).sample(rng); n < 1 {
		t.Errorf("length %d: the least is 1", n)
	}
}

// chatContent is the user message of a chat request body.
func chatContent(t *testing.T, body []byte) (string, map[string]any) {
	t.Helper()
	var v struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	var all map[string]any
	if json.Unmarshal(body, &v) != nil || json.Unmarshal(body, &all) != nil || len(v.Messages) != 1 {
		t.Fatalf("body %s", body)
	}
	return v.Messages[0].Content, all
}

// input_tokens makes prompts of the lengths drawn, one vocabulary word a
// token: the mock, which counts words, reports each as the prompt's
// tokens; output_tokens with ignore_eos asks for the length drawn, and
// the mock writes exactly that. Each answer's two lengths are measures.
func TestSyntheticRequestsAgainstTheMock(t *testing.T) {
	srv, _ := startMock(t, builtin.LLMConfig{Tokens: 4, TokensPerSecond: 20000})
	c := Config{URL: srv.URL, Model: "m", Stream: true, Seed: 7, IgnoreEOS: true,
		InputTokens:  &Lengths{Mean: 40, Stddev: 8, Min: 20, Max: 60},
		OutputTokens: &Lengths{Mean: 10, Stddev: 3, Min: 2, Max: 16}}
	d := newDriver(t, c)
	prompts, outputs := map[int]bool{}, map[int]bool{}
	for i := range uint64(30) {
		body, err := d.reqs.body(i)
		if err != nil {
			t.Fatal(err)
		}
		text, all := chatContent(t, body)
		words := len(strings.Fields(text))
		want := int(all["max_tokens"].(float64))
		prompts[words], outputs[want] = true, true
		if all["min_tokens"].(float64) != float64(want) || all["ignore_eos"] != true {
			t.Errorf("request %d: %s, want min_tokens = max_tokens and ignore_eos", i, body)
		}
		r := do(d) // request i: Do takes them in order
		lengths := map[stats.Measure]int64{}
		for _, m := range r.Measures {
			if m.Measure.IsLength() {
				lengths[m.Measure] = stats.Tokens(m.D)
			}
		}
		if r.Class != stats.OK || words < 20 || words > 60 || r.Counters[stats.PromptTokens] != int64(words) ||
			r.Counters[stats.OutputTokens] != int64(want) || lengths[stats.PromptLength] != int64(words) ||
			lengths[stats.OutputLength] != int64(want) {
			t.Errorf("request %d: %v %s, %d words asking %d tokens; counters %v, lengths %v", i, r.Class, r.Message, words, want, r.Counters, lengths)
		}
	}
	if len(prompts) < 8 || len(outputs) < 5 {
		t.Errorf("%d prompt lengths and %d output lengths in 30 requests: want them drawn, not all the mean", len(prompts), len(outputs))
	}
	if !strings.Contains(c.Redacted(), "input_tokens 40 ± 8 (min 20, max 60), output_tokens 10 ± 3 (min 2, max 16), ignore_eos") {
		t.Errorf("redacted %q", c.Redacted())
	}
}

// The same seed makes the same requests, another seed others; seed 0
// picks one and the facts tell which, so that it can be given again.
func TestSeedReproducesTheRequests(t *testing.T) {
	c := Config{URL: "http://127.0.0.1:1", Model: "m", Seed: 42,
		InputTokens: &Lengths{Mean: 30, Stddev: 10, Min: 1}, OutputTokens: &Lengths{Mean: 50, Stddev: 20}}
	a, b := newDriver(t, c), newDriver(t, c)
	c.Seed = 43
	other := newDriver(t, c)
	c.Seed = 0
	random := newDriver(t, c)
	same := 0
	for i := range uint64(50) {
		x, _ := a.reqs.body(i)
		y, _ := b.reqs.body(i)
		z, _ := other.reqs.body(i)
		if !bytes.Equal(x, y) {
			t.Fatalf("seed 42, request %d: %s, then %s", i, x, y)
		}
		if bytes.Equal(x, z) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 42 and 43 made %d of 50 requests the same", same)
	}
	c.Seed = random.seed
	again := newDriver(t, c)
	x, _ := random.reqs.body(3)
	y, _ := again.reqs.body(3)
	var seedFact string
	for _, f := range random.Facts() {
		if f.Name == "seed" {
			seedFact = f.Value
		}
	}
	if !bytes.Equal(x, y) || !strings.Contains(seedFact, "picked at random") {
		t.Errorf("seed %d told as %q does not make the same requests", random.seed, seedFact)
	}
}

// A ShareGPT file gives one prompt per conversation, its first human turn.
func TestShareGPTPrompts(t *testing.T) {
	prompts, errs := LoadShareGPT("testdata/sharegpt.json")
	var texts []string
	for _, p := range prompts {
		texts = append(texts, p.Text)
	}
	want := []string{"What is a load test?", "Name three colours.", "Write a haiku."}
	if errs != nil || !slices.Equal(texts, want) {
		t.Errorf("prompts %q, %v; want %q", texts, errs, want)
	}
	for _, tc := range []struct{ text, want string }{
		{`{"conversations": []}`, "want a JSON array of conversations"},
		{`[{"conversations": [{"from": "gpt", "value": "hi"}]}]`, "no conversation with a turn from human"},
		{`[{"conversations": "x"}]`, "conversation 1: cannot parse it"},
		{`[{"conversations": [{"from": "human", "value": "a"}]}, {`, "conversation 2: invalid JSON"},
	} {
		_, errs := ParseShareGPT(strings.NewReader(tc.text), "x.json")
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.text, errs, tc.want)
		}
	}
	d := newDriver(t, Config{URL: "http://127.0.0.1:1", Model: "m", PromptsFile: "testdata/sharegpt.json",
		PromptsFormat: FormatShareGPT, OutputTokens: &Lengths{Mean: 5}})
	body, _ := d.reqs.body(4)
	if text, all := chatContent(t, body); text != want[1] || all["max_tokens"] != 5.0 {
		t.Errorf("request 4: %s", body)
	}
}

// Each new param's problems carry its key.
func TestSyntheticParamProblems(t *testing.T) {
	for _, tc := range []struct {
		key, want string
		modify    func(*Config)
	}{
		{"input_tokens", "input_tokens: mean 0 must be >= 1", func(c *Config) { c.InputTokens = &Lengths{} }},
		{"input_tokens", "give input_tokens, prompts or prompts_file", func(c *Config) { c.InputTokens = &Lengths{Mean: 1} }},
		{"output_tokens", "stddev -1 must be", func(c *Config) { c.OutputTokens = &Lengths{Mean: 5, Stddev: -1} }},
		{"output_tokens", "min 2, mean 5 and max 4", func(c *Config) { c.OutputTokens = &Lengths{Mean: 5, Min: 2, Max: 4} }},
		{"output_tokens", "min 6 is above mean 5", func(c *Config) { c.OutputTokens = &Lengths{Mean: 5, Min: 6} }},
		{"output_tokens", "max_tokens or output_tokens, not both", func(c *Config) { c.MaxTokens, c.OutputTokens = 5, &Lengths{Mean: 5} }},
		{"ignore_eos", "ignore_eos needs output_tokens or max_tokens", func(c *Config) { c.IgnoreEOS = true }},
		{"prompts_format", `prompts_format "csv" is unknown`, func(c *Config) { c.PromptsFormat = "csv" }},
		{"prompts_format", "none is given", func(c *Config) { c.PromptsFormat = FormatShareGPT }},
		{"goodput", "give at least one bound", func(c *Config) { c.Stream, c.Goodput = true, &Goodput{} }},
		{"goodput", "ttft -1s is negative", func(c *Config) { c.Stream, c.Goodput = true, &Goodput{TTFT: -1e9} }},
		{"goodput", "ttft, tpot need a stream", func(c *Config) { c.Goodput = &Goodput{TTFT: 1, TPOT: 1, Latency: 1} }},
		{"goodput", "embeddings have no output tokens", func(c *Config) { c.Endpoint, c.Goodput = EndpointEmbeddings, &Goodput{Latency: 1} }},
	} {
		c := Config{URL: "http://127.0.0.1:4000", Model: "m", Prompts: []string{"hi"}}
		tc.modify(&c)
		errs := c.Validate()
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), tc.want) && driver.KeyOf(err) == tc.key
		}
		if !found {
			t.Errorf("%s: %v, want %q at key %s", tc.key, errs, tc.want, tc.key)
		}
	}
	ok := Config{URL: "http://127.0.0.1:4000", Model: "m", Stream: true, InputTokens: &Lengths{Mean: 100},
		OutputTokens: &Lengths{Mean: 50, Stddev: 5, Max: 60}, IgnoreEOS: true, Goodput: &Goodput{TTFT: 1, ITL: 1, TPOT: 1, Latency: 1}}
	if errs := ok.Validate(); errs != nil {
		t.Errorf("valid config: %v", errs)
	}
}
