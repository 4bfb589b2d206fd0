package openaidriver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/stats"
)

const exampleTrace = "../../../examples/traces/mooncake-small.jsonl"

// symbols is what a trace line's prompt is made of, word by word, as the
// replay makes it: word j of the block of hash id h is "h/j" wherever
// that id appears; a block without an id is the line's own.
func symbols(r TraceRequest, line, block int) []string {
	var out []string
	for w := range r.InputLength {
		k := w / block
		if k < len(r.HashIDs) {
			out = append(out, fmt.Sprintf("%d/%d", r.HashIDs[k], w%block))
		} else {
			out = append(out, fmt.Sprintf("own %d/%d", line, w))
		}
	}
	return out
}

// cachedTokens is what a prefix cache of blocks of size tokens, large
// enough to evict nothing, finds of each prompt sent in order: its
// longest common prefix with an earlier one, in whole blocks.
func cachedTokens(prompts [][]string, size int) (hits, queries int) {
	for i, p := range prompts {
		best := 0
		for _, e := range prompts[:i] {
			n := 0
			for n < len(p) && n < len(e) && p[n] == e[n] {
				n++
			}
			best = max(best, n)
		}
		hits += best / size * size
		queries += len(p)
	}
	return hits, queries
}

// Replayed one after another against the mock's prefix cache, the trace's
// requests have its lengths, and the server finds exactly the prefixes
// the hash ids share: the tokens it reports as hits are those the file's
// ids imply.
func TestTraceReplayLengthsAndPrefixReuse(t *testing.T) {
	const block = 64
	reqs, errs := LoadTrace(exampleTrace, block)
	if errs != nil {
		t.Fatal(errs)
	}
	l := builtin.NewLLM(builtin.LLMConfig{Tokens: 4, KVBlocks: 100000, BlockSize: 16}, nil)
	srv, bodies := recordBodies(t, l)
	d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, IgnoreEOS: true, Seed: 3,
		Trace: &Trace{File: exampleTrace, BlockTokens: block, Speedup: 2}})
	var prompts [][]string
	for i, r := range reqs {
		res := do(d)
		if res.Class != stats.OK {
			t.Fatalf("request %d: %s %s", i, res.Class, res.Message)
		}
		if res.Counters[stats.PromptTokens] != int64(r.InputLength) || res.Counters[stats.OutputTokens] != int64(r.OutputLength) {
			t.Errorf("request %d: %d prompt and %d output tokens, want the trace's %d and %d", i,
				res.Counters[stats.PromptTokens], res.Counters[stats.OutputTokens], r.InputLength, r.OutputLength)
		}
		prompts = append(prompts, symbols(r, i, block))
	}
	hits, queries := cachedTokens(prompts, 16)
	if hits == 0 {
		t.Fatal("the example trace shares no prefix")
	}
	got := [2]float64{mockMetric(t, l, `vllm:prefix_cache_hits_total{model_name="perflab-mock"}`),
		mockMetric(t, l, `vllm:prefix_cache_queries_total{model_name="perflab-mock"}`)}
	if got != [2]float64{float64(hits), float64(queries)} {
		t.Errorf("the server found %v of %v prompt tokens cached, want %d of %d as the hash ids share", got[0], got[1], hits, queries)
	}
	// The text behind a hash id is the same wherever it appears.
	sent := bodies()
	words := func(i int) []string {
		var b struct{ Messages []message }
		if err := json.Unmarshal([]byte(sent[i]), &b); err != nil {
			t.Fatal(err)
		}
		return strings.Fields(b.Messages[0].Content)
	}
	if a, b := words(0), words(1); strings.Join(a[:2*block], " ") != strings.Join(b[:2*block], " ") || a[2*block] == b[2*block] && a[2*block+1] == b[2*block+1] {
		t.Error("requests 1 and 2 share hash ids 100 and 101 only, their texts do not")
	}
	arrivals := d.Arrivals()
	for i, r := range reqs {
		if want := time.Duration(r.Timestamp / 2 * float64(time.Millisecond)); arrivals[i] != want {
			t.Fatalf("arrival %d at %v, want %v (the trace's at speedup 2)", i, arrivals[i], want)
		}
	}
}

func TestTraceProblems(t *testing.T) {
	reqs, errs := ParseTrace([]byte(`{"timestamp": 10, "input_length": 100, "output_length": 5, "hash_ids": [1, 2]}

{"timestamp": 5, "input_length": 10, "output_length": 5}
{"timestamp": 20, "input_length": 0, "output_length": 5}
{"timestamp": 30, "input_length": 10, "output_length": 5, "hash_ids": [1, 2]}
not json
`), "t.jsonl", 64)
	want := []string{"t.jsonl:3: timestamp 5", "t.jsonl:4: input_length 0", "t.jsonl:5: 2 hash_ids for input_length 10", "t.jsonl:6: cannot parse"}
	if len(reqs) != 1 || len(errs) != len(want) {
		t.Fatalf("%d requests, problems %v", len(reqs), errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("problem %d: %v, want %q…", i, errs[i], w)
		}
	}
	c := Config{URL: "http://127.0.0.1:1", Model: "m", Trace: &Trace{File: exampleTrace, Speedup: -1}, InputTokens: &Lengths{Mean: 3}}
	if errs := c.Validate(); len(errs) != 2 {
		t.Errorf("trace with speedup -1 and input_tokens: %v, want 2 problems", errs)
	}
}
