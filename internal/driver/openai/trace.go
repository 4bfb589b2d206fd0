package openaidriver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// DefaultBlockTokens is the tokens one hash id of a trace stands for when
// Trace.BlockTokens is 0: Mooncake's.
const DefaultBlockTokens = 512

// maxTraceErrors bounds the problems reported about a trace file.
const maxTraceErrors = 20

// Trace replays a timed trace in Mooncake's JSONL format, one request a
// line: {"timestamp": ms from the trace's start, "input_length": prompt
// tokens, "output_length": tokens to write, "hash_ids": [...]}. Request n
// arrives at its timestamp (divided by Speedup), open model: its latency
// runs from then, whatever the server did with the ones before. Its
// prompt is input_length words in blocks of BlockTokens, block k the
// text of hash_ids[k], the same text wherever that id appears, so that
// requests sharing leading hash ids share a prefix a server can cache
// (a block without an id is the request's own); it asks for
// output_length tokens as max_tokens.
type Trace struct {
	File        string  `yaml:"file"`
	Speedup     float64 `yaml:"speedup"`      // > 0; 0 means 1: the trace's own timing
	BlockTokens int     `yaml:"block_tokens"` // tokens a hash id stands for; 0 means DefaultBlockTokens
}

// TraceRequest is one line of a trace.
type TraceRequest struct {
	Timestamp    float64  `json:"timestamp"` // ms
	InputLength  int      `json:"input_length"`
	OutputLength int      `json:"output_length"`
	HashIDs      []uint64 `json:"hash_ids"`
}

func (tr *Trace) blockTokens() int {
	if tr.BlockTokens == 0 {
		return DefaultBlockTokens
	}
	return tr.BlockTokens
}

func (tr *Trace) speedup() float64 {
	if tr.Speedup == 0 {
		return 1
	}
	return tr.Speedup
}

// problems checks the trace's settings against the rest of c, and reads
// the file.
func (tr *Trace) problems(c Config) ([]TraceRequest, []error) {
	if tr == nil {
		return nil, nil
	}
	var errs []error
	add := func(format string, a ...any) {
		errs = append(errs, driver.ParamErrorf("trace", "trace: "+format, a...))
	}
	if tr.File == "" {
		add("file is required")
	}
	if math.IsNaN(tr.Speedup) || math.IsInf(tr.Speedup, 0) || tr.Speedup < 0 {
		add("speedup %v must be a number > 0", tr.Speedup)
	}
	if tr.BlockTokens < 0 {
		add("block_tokens %d must be >= 1 (0: %d)", tr.BlockTokens, DefaultBlockTokens)
	}
	if c.Endpoint == EndpointEmbeddings {
		add("embeddings have no output to replay")
	}
	for key, set := range map[string]bool{"input_tokens": c.InputTokens != nil, "output_tokens": c.OutputTokens != nil,
		"max_tokens": c.MaxTokens > 0, "conversation": c.Conversation != nil, "shared_prefix": c.SharedPrefix != nil,
		"prompts": len(c.Prompts) > 0, "prompts_file": c.PromptsFile != ""} {
		if set {
			add("give trace or %s: the trace makes the requests", key)
		}
	}
	if len(errs) > 0 || tr.File == "" {
		return nil, errs
	}
	reqs, ferrs := LoadTrace(tr.File, tr.blockTokens())
	for _, err := range ferrs {
		errs = append(errs, driver.WithKey("trace", err))
	}
	return reqs, errs
}

// LoadTrace reads a trace file; see ParseTrace.
func LoadTrace(path string, blockTokens int) ([]TraceRequest, []error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, []error{fmt.Errorf("cannot read trace: %w", err)}
	}
	return ParseTrace(b, path, blockTokens)
}

// ParseTrace reads a trace's lines: every problem as "name:line: ...",
// at most maxTraceErrors; blank lines skipped, other keys ignored. A
// line needs input_length >= 1, output_length >= 1, a timestamp >= 0
// and not before the line above's, and at most as many hash ids as its
// prompt has blocks.
func ParseTrace(b []byte, name string, blockTokens int) ([]TraceRequest, []error) {
	var reqs []TraceRequest
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxPromptLine)
	last := 0.0
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r TraceRequest
		err := json.Unmarshal(sc.Bytes(), &r)
		switch {
		case err != nil:
			err = fmt.Errorf("cannot parse trace line: %w", err)
		case r.InputLength < 1 || r.OutputLength < 1:
			err = fmt.Errorf("input_length %d and output_length %d must be >= 1", r.InputLength, r.OutputLength)
		case r.Timestamp < 0 || r.Timestamp < last || math.IsNaN(r.Timestamp):
			err = fmt.Errorf("timestamp %v must be >= 0 and not before the line above's (%v)", r.Timestamp, last)
		case len(r.HashIDs) > (r.InputLength+blockTokens-1)/blockTokens:
			err = fmt.Errorf("%d hash_ids for input_length %d: more than its blocks of %d tokens", len(r.HashIDs), r.InputLength, blockTokens)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		last = r.Timestamp
		reqs = append(reqs, r)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: cannot read trace: %w", name, err))
	}
	if len(reqs) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no requests in it", name))
	}
	if len(errs) > maxTraceErrors {
		errs = append(errs[:maxTraceErrors], fmt.Errorf("%s: ... and %d more problems", name, len(errs)-maxTraceErrors))
	}
	return reqs, errs
}

// The streams of the random draws of a trace's block texts and of the
// blocks without an id.
const (
	hashTextStream = 0x3c6ef372fe94f82b
	ownTextStream  = 0xa54ff53a5f1d36f1
)

// traceRequests makes the requests of a replayed trace.
type traceRequests struct {
	reqs        []TraceRequest
	blockTokens int
	speedup     float64
	seed        uint64
}

// Arrivals are the trace's arrival times, scaled by its speedup.
func (t *traceRequests) Arrivals() []time.Duration {
	out := make([]time.Duration, len(t.reqs))
	for i, r := range t.reqs {
		out[i] = time.Duration(r.Timestamp / t.speedup * float64(time.Millisecond))
	}
	return out
}

// prompt is request i's prompt: block k the text of its hash id k, or
// the request's own where it has none, input_length words in all.
func (t *traceRequests) prompt(i uint64) (string, int) {
	r := t.reqs[i%uint64(len(t.reqs))]
	var b strings.Builder
	for k, left := 0, r.InputLength; left > 0; k++ {
		n := min(left, t.blockTokens)
		rng := rand.New(rand.NewPCG(t.seed^ownTextStream, i<<20|uint64(k)))
		if k < len(r.HashIDs) {
			rng = rand.New(rand.NewPCG(t.seed^hashTextStream, r.HashIDs[k]))
		}
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(promptWords(rng, n))
		left -= n
	}
	return b.String(), r.OutputLength
}
