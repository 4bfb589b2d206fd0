package openaidriver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxPromptErrors bounds the problems reported about a prompts file.
const maxPromptErrors = 20

// maxPromptLine bounds one line of a prompts file.
const maxPromptLine = 16 << 20

// Prompt is one prompt: chat messages, sent as they are, or a text.
type Prompt struct {
	Messages json.RawMessage // a JSON array of message objects; nil for a text prompt
	Text     string
	Line     int // line in the prompts file; 0 for an inline prompt
}

// LoadPrompts reads a JSONL prompts file; see ParsePrompts.
func LoadPrompts(path string) ([]Prompt, []error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, []error{fmt.Errorf("cannot read prompts_file: %w", err)}
	}
	defer f.Close()
	return ParsePrompts(f, path)
}

// ParsePrompts reads prompts, one JSON object per line:
//
//	{"messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]}
//	{"prompt": "..."}
//
// Blank lines are skipped; other keys on a line are ignored. Each message
// needs a "role"; the messages are otherwise sent as written (content may
// be a string or a list of parts). Every problem is reported as
// "name:line: ...", and no prompt at all is a problem too.
func ParsePrompts(r io.Reader, name string) ([]Prompt, []error) {
	var prompts []Prompt
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxPromptLine)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		p, err := parsePrompt(sc.Bytes())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		p.Line = line
		prompts = append(prompts, p)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s:%d: cannot read prompts: %w", name, line+1, err))
	}
	if len(prompts) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no prompts in it", name))
	}
	return prompts, errs
}

// parsePrompt reads one line of a prompts file.
func parsePrompt(line []byte) (Prompt, error) {
	var v struct {
		Messages json.RawMessage `json:"messages"`
		Prompt   *string         `json:"prompt"`
	}
	if err := json.Unmarshal(line, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Prompt{}, fmt.Errorf("cannot parse prompt: invalid JSON at column %d: %w", se.Offset, err)
		}
		return Prompt{}, fmt.Errorf("cannot parse prompt: %w", err)
	}
	hasMessages := len(v.Messages) > 0 && string(v.Messages) != "null"
	switch {
	case hasMessages && v.Prompt != nil:
		return Prompt{}, errors.New(`give "messages" or "prompt", not both`)
	case v.Prompt != nil:
		return Prompt{Text: *v.Prompt}, nil
	case !hasMessages:
		return Prompt{}, errors.New(`want {"messages": [...]} or {"prompt": "..."}`)
	}
	var msgs []struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(v.Messages, &msgs); err != nil {
		return Prompt{}, errors.New(`"messages" must be a list of objects with a "role"`)
	}
	if len(msgs) == 0 {
		return Prompt{}, errors.New(`"messages" is empty`)
	}
	for i, m := range msgs {
		if m.Role == nil || *m.Role == "" {
			return Prompt{}, fmt.Errorf(`message %d has no "role"`, i+1)
		}
	}
	return Prompt{Messages: v.Messages}, nil
}
