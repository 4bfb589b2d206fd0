//go:build linux

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipMarker, on the line before a ```yaml fence, marks a block that is
// deliberately not a whole plan; the text after it says why.
const skipMarker = "<!-- plan check: skip"

// docBlock is a YAML block of a Markdown file and the line it starts at.
type docBlock struct {
	file string
	line int
	text string
}

// yamlBlocks returns the ```yaml blocks of a Markdown text, without those
// marked with skipMarker.
func yamlBlocks(file, text string) []docBlock {
	var out []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		skip := i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), skipMarker)
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		indent := len(lines[start-1]) - len(strings.TrimLeft(lines[start-1], " "))
		var b strings.Builder
		for _, l := range lines[start:min(i, len(lines))] {
			b.WriteString(strings.TrimPrefix(l, strings.Repeat(" ", indent)) + "\n")
		}
		if !skip {
			out = append(out, docBlock{file: file, line: start + 1, text: b.String()})
		}
	}
	return out
}

// TestDocPlansAreValid checks, as `perflab plan check` does, every YAML
// block of README.md and docs/**/*.md (each a plan, unless marked with
// skipMarker) and every plan under examples/, with the environment
// variables they read set, as their users would.
func TestDocPlansAreValid(t *testing.T) {
	t.Parallel()
	env := []string{"LITELLM_MASTER_KEY=sk-example-check", "MY_TOKEN=token-example-check"}
	docs := []string{"../../README.md"}
	err := filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, yamlBlocks(doc, string(b))...)
	}
	if len(blocks) < 4 {
		t.Fatalf("%d YAML blocks in %v", len(blocks), docs)
	}
	dir := t.TempDir()
	for i, b := range blocks {
		path := filepath.Join(dir, fmt.Sprintf("%s-%03d.yaml", filepath.Base(b.file), i))
		if err := os.WriteFile(path, []byte(b.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runEnv(t, env, "plan", "check", path); r.code != 0 {
			t.Errorf("%s:%d: plan check: exit %d\n%s", b.file, b.line, r.code, r.stderr)
		}
	}
	plans, _ := filepath.Glob("../../examples/*.yaml")
	if len(plans) < 3 {
		t.Fatalf("%d example plans", len(plans))
	}
	for _, p := range plans {
		if r := runEnv(t, env, "plan", "check", p); r.code != 0 {
			t.Errorf("%s: exit %d\n%s", p, r.code, r.stderr)
		}
	}
}

func TestYAMLBlocks(t *testing.T) {
	t.Parallel()
	text := "# t\n```yaml\na: 1\n```\n<!-- plan check: skip: a fragment -->\n```yaml\nb: 2\n```\n  ```yaml\n  c: 3\n  ```\n"
	got := yamlBlocks("x.md", text)
	if len(got) != 2 || got[0].text != "a: 1\n" || got[0].line != 3 || got[1].text != "c: 3\n" {
		t.Errorf("%+v", got)
	}
}
