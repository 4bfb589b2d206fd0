package openaidriver

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// maxTurns bounds Conversation.Turns: each turn is an operation of its
// own in the report.
const maxTurns = 50

// SharedPrefix begins every request with a system prompt of Tokens: for
// a share of them one of a few shared ones, as the users of one
// application share its instructions (what a server's prefix cache is
// for); for the others one of their own.
type SharedPrefix struct {
	Prefixes int `yaml:"prefixes"` // how many distinct prefixes, >= 1
	Tokens   int `yaml:"tokens"`   // length of each, in tokens (words), >= 1
	// Share is the fraction of requests (of conversations, with
	// Conversation) given a shared one, drawn per request; nil means 1.
	Share *float64 `yaml:"share"`
}

// Conversation makes each VU hold conversations of Turns requests: each
// turn's prompt is the conversation so far (every user message and the
// answer the server gave to it) and a new user message of input_tokens.
type Conversation struct {
	Turns int `yaml:"turns"` // 1..maxTurns
	// ThinkTime is the pause between a turn's answer and the next turn,
	// under the closed model (the open model's arrivals pace the turns).
	ThinkTime time.Duration `yaml:"think_time"`
}

// share applies the default.
func (s *SharedPrefix) share() float64 {
	if s.Share == nil {
		return 1
	}
	return *s.Share
}

func (s *SharedPrefix) problems() []error {
	if s == nil {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) {
		errs = append(errs, driver.ParamErrorf("shared_prefix", "shared_prefix: "+format, a...))
	}
	if s.Prefixes < 1 {
		add("prefixes %d must be >= 1", s.Prefixes)
	}
	if s.Tokens < 1 {
		add("tokens %d must be >= 1", s.Tokens)
	}
	if v := s.share(); math.IsNaN(v) || v < 0 || v > 1 {
		add("share %v must be between 0 and 1", v)
	}
	return errs
}

func (s SharedPrefix) String() string {
	return fmt.Sprintf("%d of %d tokens, shared by %s %%", s.Prefixes, s.Tokens, strconv.FormatFloat(100*s.share(), 'g', 4, 64))
}

// problems checks the conversation against the rest of c.
func (v *Conversation) problems(c Config) []error {
	if v == nil {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) {
		errs = append(errs, driver.ParamErrorf("conversation", "conversation: "+format, a...))
	}
	if v.Turns < 1 || v.Turns > maxTurns {
		add("turns %d must be between 1 and %d", v.Turns, maxTurns)
	}
	if v.ThinkTime < 0 {
		add("think_time %v is negative", v.ThinkTime)
	}
	if c.Endpoint != "" && c.Endpoint != EndpointChat {
		add("conversations need endpoint %s", EndpointChat)
	}
	if c.InputTokens == nil {
		add("needs input_tokens: the length of each turn's new user message")
	}
	return errs
}

// The streams of random draws of shared prefixes, apart from the prompts'
// and lengths'.
const (
	prefixDrawStream = 0x6a09e667f3bcc909
	prefixTextStream = 0xbb67ae8584caa73b
)

// prefixes are a run's shared prefixes.
type prefixes struct {
	texts  []string
	tokens int
	share  float64
}

func newPrefixes(s *SharedPrefix, seed uint64) *prefixes {
	if s == nil {
		return nil
	}
	p := &prefixes{tokens: s.Tokens, share: s.share()}
	for k := range s.Prefixes {
		p.texts = append(p.texts, promptWords(rand.New(rand.NewPCG(seed^prefixTextStream, uint64(k))), s.Tokens))
	}
	return p
}

// draw picks request i's prefix: one of the shared ones, with the
// share's chance, else one of the same length of its own, shared with no
// other request, so that the share changes what a cache can reuse and
// not the prompts' length.
func (p *prefixes) draw(seed, i uint64) string {
	if p == nil {
		return ""
	}
	rng := rand.New(rand.NewPCG(seed^prefixDrawStream, i))
	if rng.Float64() >= p.share {
		return promptWords(rng, p.tokens)
	}
	return p.texts[rng.IntN(len(p.texts))]
}

// message is one message of a chat request.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// withPrefix puts prefix before p: as a system message first (chat), or
// before the text.
func withPrefix(endpoint string, p Prompt, prefix string) (Prompt, error) {
	if endpoint != EndpointChat {
		p.Text = prefix + " " + p.Text
		return p, nil
	}
	var msgs []json.RawMessage
	if p.Messages != nil {
		if err := json.Unmarshal(p.Messages, &msgs); err != nil {
			return p, err
		}
	} else {
		user, _ := json.Marshal(message{"user", p.Text}) // cannot fail: strings
		msgs = []json.RawMessage{user}
	}
	system, _ := json.Marshal(message{"system", prefix})
	b, err := json.Marshal(append([]json.RawMessage{system}, msgs...))
	p.Messages = b
	return p, err
}

// conversations holds each VU's conversation. A VU does one operation at
// a time, so a session is only touched by its own VU.
type conversations struct {
	cfg      Conversation
	mu       sync.Mutex
	sessions map[int]*session
}

// session is one conversation under way.
type session struct {
	prefix  string
	history []message
	turns   int // turns answered
}

// turn is one request of a conversation.
type turn struct {
	s     *session
	index int // 1-based
	user  string
}

func newConversations(c *Conversation) *conversations {
	if c == nil {
		return nil
	}
	return &conversations{cfg: *c, sessions: map[int]*session{}}
}

// session is vu's conversation, a new one (with prefix) when it has none.
func (c *conversations) session(vu int, prefix func() string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[vu]
	if s == nil {
		s = &session{prefix: prefix()}
		c.sessions[vu] = s
	}
	return s
}

// messages are the turn's request: the prefix, the history, the new
// user message.
func (t turn) messages() []message {
	msgs := make([]message, 0, len(t.s.history)+2)
	if t.s.prefix != "" {
		msgs = append(msgs, message{"system", t.s.prefix})
	}
	msgs = append(msgs, t.s.history...)
	return append(msgs, message{"user", t.user})
}

// finish records the turn's outcome: an answered turn joins the history;
// a failed one, or the last, ends the conversation, and the VU's next
// request starts another.
func (c *conversations) finish(vu int, t turn, ok bool, reply string) {
	if ok {
		t.s.history = append(t.s.history, message{"user", t.user}, message{"assistant", reply})
		t.s.turns++
	}
	if !ok || t.s.turns >= c.cfg.Turns {
		c.mu.Lock()
		delete(c.sessions, vu)
		c.mu.Unlock()
	}
}

// ThinkTime implements driver.Thinker: the pause before vu's next turn,
// none before a conversation's first.
func (d *Driver) ThinkTime(vu int) time.Duration {
	c := d.convs
	if c == nil || c.cfg.ThinkTime == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sessions[vu]; s != nil && s.turns > 0 {
		return c.cfg.ThinkTime
	}
	return 0
}

// turnOp is the operation name of a conversation's turn.
func turnOp(name string, index int) string {
	return name + " turn " + strconv.Itoa(index)
}
