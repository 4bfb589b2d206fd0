package openaidriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// The formats of a prompts file (Config.PromptsFormat).
const (
	FormatJSONL    = "jsonl"    // one {"messages": [...]} or {"prompt": "..."} a line
	FormatShareGPT = "sharegpt" // a JSON array of conversations, as the ShareGPT data sets
)

// LoadShareGPT reads a ShareGPT file; see ParseShareGPT.
func LoadShareGPT(path string) ([]Prompt, []error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, []error{fmt.Errorf("cannot read prompts_file: %w", err)}
	}
	defer f.Close()
	return ParseShareGPT(f, path)
}

// shareGPTConversation is what is read of one conversation.
type shareGPTConversation struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// ParseShareGPT reads a ShareGPT-format file, the JSON array the ShareGPT
// data sets (ShareGPT_V3_unfiltered_cleaned_split.json) and vLLM's and
// guidellm's benchmarks use:
//
//	[{"id": "…", "conversations": [{"from": "human", "value": "…"}, {"from": "gpt", "value": "…"}, …]}, …]
//
// Each conversation gives one prompt, the text of its first turn from
// "human" (or "user"), sent as the user message; conversations without
// one are skipped, as are other keys. The answers are not used: output
// lengths come from output_tokens or max_tokens. The array is read one
// conversation at a time, so a large file costs only its prompts. A file
// that is not such an array, or has no prompt at all, is a problem; Line
// is the conversation's index in the array, from 1.
func ParseShareGPT(r io.Reader, name string) ([]Prompt, []error) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, []error{fmt.Errorf("%s: cannot parse ShareGPT file: want a JSON array of conversations", name)}
	}
	var prompts []Prompt
	for n := 1; dec.More(); n++ {
		var c shareGPTConversation
		if err := dec.Decode(&c); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, []error{fmt.Errorf("%s: conversation %d: cannot parse it: %w", name, n, err)}
			}
			return nil, []error{fmt.Errorf("%s: conversation %d: invalid JSON at byte %d: %w", name, n, dec.InputOffset(), err)}
		}
		for _, turn := range c.Conversations {
			if (turn.From == "human" || turn.From == "user") && turn.Value != "" {
				prompts = append(prompts, Prompt{Text: turn.Value, Line: n})
				break
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, []error{fmt.Errorf("%s: cannot parse ShareGPT file: %w", name, err)}
	}
	if len(prompts) == 0 {
		return nil, []error{fmt.Errorf("%s: no conversation with a turn from human", name)}
	}
	return prompts, nil
}
