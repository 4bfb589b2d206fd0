//go:build linux

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link's target; fenced code is left out.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchor is the anchor GitHub gives a heading: lower case, every
// character but letters, digits, '-', '_' and spaces dropped, spaces made
// '-'.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdAnchors are the anchors of a Markdown file's headings.
func mdAnchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
		}
		if h := strings.TrimLeft(l, "#"); !fence && h != l && strings.HasPrefix(h, " ") && len(l)-len(h) <= 6 {
			out[headingAnchor(h)] = true
		}
	}
	return out
}

// Every relative link of README.md, CONTRIBUTING.md and docs/**/*.md
// leads to a file that exists and, with a #fragment into Markdown, to one
// of its headings: pages moved or headings renamed cannot leave a reader
// at a dead end.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	files := []string{"../../README.md", "../../CONTRIBUTING.md"}
	_ = filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	texts := map[string]string{}
	read := func(p string) (string, error) {
		if s, ok := texts[p]; ok {
			return s, nil
		}
		b, err := os.ReadFile(p)
		texts[p] = string(b)
		return string(b), err
	}
	for _, f := range files {
		text, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, ":") && !strings.HasPrefix(target, "#") {
					continue // a URL
				}
				path, frag, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: %s: no such file", f, i+1, target)
					continue
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if dt, err := read(dest); err != nil || !mdAnchors(dt)[frag] {
					t.Errorf("%s:%d: %s: no heading with that anchor in %s", f, i+1, target, dest)
				}
			}
		}
	}
}
