package openaidriver

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLoadPrompts(t *testing.T) {
	prompts, errs := LoadPrompts("testdata/prompts.jsonl")
	if errs != nil {
		t.Fatalf("errors: %v", errs)
	}
	if len(prompts) != 3 {
		t.Fatalf("%d prompts, want 3 (the blank line skipped)", len(prompts))
	}
	var msgs []map[string]any
	if err := json.Unmarshal(prompts[0].Messages, &msgs); err != nil || len(msgs) != 2 || msgs[1]["content"] != "Name three colours." {
		t.Errorf("prompt 1 messages = %s (%v)", prompts[0].Messages, err)
	}
	if prompts[1].Messages != nil || prompts[1].Text != "Write a haiku about load testing" || prompts[1].Line != 2 {
		t.Errorf("prompt 2 = %+v", prompts[1])
	}
	if prompts[2].Messages == nil || prompts[2].Line != 4 {
		t.Errorf("prompt 3 (content parts, an extra key) = %+v", prompts[2])
	}
}

// Every bad line is reported, at its line number.
func TestParsePromptsReportsEveryLine(t *testing.T) {
	prompts, errs := LoadPrompts("testdata/bad.jsonl")
	if len(prompts) != 1 || prompts[0].Text != "fine" {
		t.Errorf("prompts = %+v, want the one good line", prompts)
	}
	want := []string{
		"testdata/bad.jsonl:2: cannot parse prompt: invalid JSON",
		`testdata/bad.jsonl:3: "messages" is empty`,
		`testdata/bad.jsonl:4: message 1 has no "role"`,
		`testdata/bad.jsonl:6: give "messages" or "prompt", not both`,
		`testdata/bad.jsonl:7: want {"messages": [...]} or {"prompt": "..."}`,
		"testdata/bad.jsonl:8: cannot parse prompt:",
		`testdata/bad.jsonl:9: "messages" must be a list`,
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d = %q, want it to start with %q", i, errs[i], w)
		}
	}
}

func TestParsePromptsEdgeCases(t *testing.T) {
	if _, errs := ParsePrompts(strings.NewReader("\n  \n"), "empty.jsonl"); len(errs) != 1 || errs[0].Error() != "empty.jsonl: no prompts in it" {
		t.Errorf("empty file: %v", errs)
	}
	if _, errs := LoadPrompts("testdata/missing.jsonl"); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "cannot read prompts_file:") {
		t.Errorf("missing file: %v", errs)
	}
	long := `{"prompt": "` + strings.Repeat("x", maxPromptLine) + `"}`
	if _, errs := ParsePrompts(strings.NewReader("{\"prompt\":\"a\"}\n"+long), "long.jsonl"); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "long.jsonl:2: cannot read prompts") {
		t.Errorf("over-long line: %v", errs)
	}
	prompts, errs := ParsePrompts(strings.NewReader("{\"prompt\":\"\"}\r\n"), "crlf.jsonl")
	if errs != nil || len(prompts) != 1 {
		t.Errorf("CRLF line with an empty prompt: %v, %v", prompts, errs)
	}
}
