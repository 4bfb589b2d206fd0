package openaidriver

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/driver"
)

// Lengths is a distribution of lengths in tokens, as guidellm and AIPerf
// describe synthetic data: each request draws Mean + Stddev × N(0, 1),
// rounded and clamped to [Min, Max] (clamped, not drawn again, as
// guidellm does). Stddev 0 makes every length Mean.
type Lengths struct {
	Mean   int     `yaml:"mean"`   // required, >= 1
	Stddev float64 `yaml:"stddev"` // >= 0
	Min    int     `yaml:"min"`    // >= 1; 0 means 1
	Max    int     `yaml:"max"`    // 0 means no bound
}

// sample draws one length.
func (l Lengths) sample(rng *rand.Rand) int {
	v := float64(l.Mean)
	if l.Stddev > 0 {
		v += l.Stddev * rng.NormFloat64()
	}
	n := max(int(math.Round(min(v, math.MaxInt32))), l.Min, 1)
	if l.Max > 0 {
		n = min(n, l.Max)
	}
	return n
}

// problems lists what is wrong with l, given as key.
func (l *Lengths) problems(key string) []error {
	if l == nil {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, key+": "+format, a...)) }
	if l.Mean < 1 {
		add("mean %d must be >= 1", l.Mean)
	}
	if math.IsNaN(l.Stddev) || math.IsInf(l.Stddev, 0) || l.Stddev < 0 {
		add("stddev %v must be a number >= 0", l.Stddev)
	}
	if l.Min < 0 {
		add("min %d must be >= 1 (0: 1)", l.Min)
	}
	if l.Max < 0 {
		add("max %d must be >= 1 (0: no bound)", l.Max)
	}
	if l.Max > 0 && (l.Mean > l.Max || l.Min > l.Max) {
		add("min %d, mean %d and max %d must be in that order", max(l.Min, 1), l.Mean, l.Max)
	}
	if l.Min > l.Mean && l.Mean >= 1 {
		add("min %d is above mean %d", l.Min, l.Mean)
	}
	return errs
}

// String describes l: "512", or "512 ± 64 (min 1, max 1024)".
func (l Lengths) String() string {
	s := strconv.Itoa(l.Mean)
	if l.Stddev > 0 {
		s += " ± " + strconv.FormatFloat(l.Stddev, 'g', 4, 64)
	}
	if l.Min > 1 || l.Max > 0 {
		s += fmt.Sprintf(" (min %d", max(l.Min, 1))
		if l.Max > 0 {
			s += fmt.Sprintf(", max %d", l.Max)
		}
		s += ")"
	}
	return s
}

// vocabulary is what synthetic prompts are made of: common English words,
// lower case, that the tokenizers of the models usually served (GPT-2 and
// OpenAI's BPE, Llama's, Mistral's, Qwen's) hold whole, one token each
// with the space before it. So a prompt of n words is about n tokens: the
// chat template adds its own (a few to a dozen), and a tokenizer may split
// a word this list did not foresee. That is the approximation perflab
// makes without a tokenizer, which would need the model's tokenizer file
// and a library to read it; the server's own count, the usage's
// prompt_tokens that the report shows as the prompt lengths, tells how
// close it came. Words are drawn at random for each prompt, so prompts
// share no prefix a server could cache.
var vocabulary = strings.Fields(`the of and to in is was for on that with as by at from his her it be are this which an or had not
but have were all their one they has been would who more there can when its time other out into only
first new some what also about these after so two may over people than then them year many most made
during used where between through each under such very back just well because any same water long
day part number sound work place great line right old name good man think say help low before move
home mother world house small end put read hand large still learn should land point city play light
live grow keep open walk group life young run page letter story music color paper`)

// promptWords returns a prompt of n words of the vocabulary, drawn with
// rng, separated by single spaces.
func promptWords(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * 6)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}

// outputStream separates the random draws of output lengths from those of
// prompts, so that changing input_tokens leaves the output lengths as
// they were.
const outputStream = 0x9e3779b97f4a7c15

// requests makes the body of each request: each prompt's built once and
// sent in turn when every request of a prompt is the same; otherwise
// request i (counted from 0 in the order Do takes them, across VUs) is
// made from the seed and i alone, so that a seed gives the same requests
// again.
type requests struct {
	fixed    [][]byte
	cfg      Config // with defaults
	prompts  []Prompt
	seed     uint64
	prefixes *prefixes      // nil: none shared
	trace    *traceRequests // nil: no trace replayed
}

// newRequests prepares the requests of c from its inputs, read when c was
// checked: its prompts (none with synthetic prompts) or its trace's
// requests.
func newRequests(c Config, in inputs, seed int64) (*requests, error) {
	prompts := in.prompts
	q := &requests{cfg: c, prompts: prompts, seed: uint64(seed), prefixes: newPrefixes(c.SharedPrefix, uint64(seed))}
	if tr := c.Trace; tr != nil {
		q.trace = &traceRequests{reqs: in.trace, blockTokens: tr.blockTokens(), speedup: tr.speedup(), seed: uint64(seed)}
		_, err := q.body(0)
		return q, err
	}
	if c.InputTokens != nil || c.OutputTokens != nil || c.SharedPrefix != nil {
		_, err := q.body(0) // every other body encodes as this one does
		return q, err
	}
	bodies := make([][]byte, len(prompts))
	for i, p := range prompts {
		var err error
		if bodies[i], err = encodeBody(c, p, c.MaxTokens); err != nil {
			return nil, fmt.Errorf("cannot encode prompt %d: %w", i+1, err)
		}
	}
	q.fixed = bodies
	return q, nil
}

// count is how many distinct requests there are; 0 when each is made.
func (q *requests) count() int { return len(q.fixed) }

// body is the body of request i.
func (q *requests) body(i uint64) ([]byte, error) {
	if q.fixed != nil {
		return q.fixed[i%uint64(len(q.fixed))], nil
	}
	if q.trace != nil {
		text, out := q.trace.prompt(i)
		return encodeBody(q.cfg, Prompt{Text: text}, out)
	}
	p := q.prompt(i)
	if pre := q.prefixes.draw(q.seed, i); pre != "" {
		var err error
		if p, err = withPrefix(q.cfg.Endpoint, p, pre); err != nil {
			return nil, err
		}
	}
	return encodeBody(q.cfg, p, q.maxTokens(i))
}

// prompt is request i's prompt, before any shared prefix.
func (q *requests) prompt(i uint64) Prompt {
	if in := q.cfg.InputTokens; in != nil {
		rng := rand.New(rand.NewPCG(q.seed, i))
		return Prompt{Text: promptWords(rng, in.sample(rng))}
	}
	return q.prompts[i%uint64(len(q.prompts))]
}

// maxTokens is what request i asks for as max_tokens; 0 for none.
func (q *requests) maxTokens(i uint64) int {
	if out := q.cfg.OutputTokens; out != nil {
		return out.sample(rand.New(rand.NewPCG(q.seed^outputStream, i)))
	}
	return q.cfg.MaxTokens
}

// turn makes request i as the next turn of vu's conversation.
func (q *requests) turn(c *conversations, vu int, i uint64) ([]byte, turn, error) {
	s := c.session(vu, func() string { return q.prefixes.draw(q.seed, i) })
	t := turn{s: s, index: s.turns + 1, user: q.prompt(i).Text}
	msgs, err := json.Marshal(t.messages())
	if err != nil {
		return nil, t, err
	}
	body, err := encodeBody(q.cfg, Prompt{Messages: msgs}, q.maxTokens(i))
	return body, t, err
}
