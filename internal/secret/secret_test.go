package secret

import (
	"strings"
	"testing"
)

// TestScrubber: a Set's scrubber replaces each credential, by its
// reference when it came from the environment, by [redacted] when written
// literally (after its auth scheme); a value too short to tell from other
// text is left; a secret containing another is replaced whole.
func TestScrubber(t *testing.T) {
	set := Set{}
	set.Env("s3cr3t", "${TOKEN}")
	set.Env("s3cr3t", "${OTHER}") // the first reference stays
	set.Env("abc", "${SHORT}")
	for _, v := range []string{"literal-env-key", "Bearer literal-bearer", "abc", "${TOKEN}", "x-{{name}}", "", "s3cr3t-longer"} {
		set.Literal(v)
	}
	set.URL("http://u:url-password@127.0.0.1:4/?api_key=query-key&model=m")
	s := set.Scrubber()
	in := "s3cr3t literal-env-key abc url-password query-key Bearer literal-bearer s3cr3t-longer model"
	want := "${TOKEN} [redacted] abc [redacted] [redacted] Bearer [redacted] [redacted] model"
	if got := s.String(in); got != want {
		t.Errorf("scrubbed\n%s\nwant\n%s", got, want)
	}
	var none *Scrubber
	if (Set{}).Scrubber() != nil || none.String("s3cr3t") != "s3cr3t" {
		t.Error("an empty set scrubs")
	}
	var b strings.Builder
	w := NewWriter(&b, s)
	if n, err := w.Write([]byte("bad token Bearer literal-bearer\n")); err != nil || n != 32 {
		t.Errorf("Write = %d, %v", n, err)
	}
	if b.String() != "bad token Bearer [redacted]\n" {
		t.Errorf("through the writer: %q", b.String())
	}
}

// TestScrubberCutSecret: a text cut short in the middle of a credential
// (a driver bounds the messages it keeps) keeps no fragment of 6
// characters or more of it, with or without the "..." of the cut; a start
// shorter than that, or text that only looks alike, stays.
func TestScrubberCutSecret(t *testing.T) {
	set := Set{}
	set.Env("ENVSECRETVALUE-0123456789", "${TOKEN}")
	set.Literal("Bearer sk-PROJ-abcdefghijklmnop")
	s := set.Scrubber()
	for _, c := range []struct{ in, want string }{
		{"401: Authorization: Bearer ENVSECRETV...", "401: Authorization: Bearer ${TOKEN}..."},
		{"401: Authorization: Bearer ENVSEC", "401: Authorization: Bearer ${TOKEN}"},
		{"echo: Bearer sk-PROJ-abc…", "echo: Bearer [redacted]…"},
		{"echo: Bearer sk-PRO...", "echo: Bearer [redacted]..."},
		{"echo: Bearer sk-PR...", "echo: Bearer sk-PR..."}, // 5 characters: below the fragment length
		{"echo: Bearer sk-P...", "echo: Bearer sk-P..."},   // 4 characters tell nothing
		{"ENVSEC in the middle, not at the end", "ENVSEC in the middle, not at the end"},
		{"whole ENVSECRETVALUE-0123456789 and cut ENVSECRETVAL", "whole ${TOKEN} and cut ${TOKEN}"},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScrubberWith(t *testing.T) {
	set := Set{}
	set.Env("plan-secret-value", "${PLAN}")
	more := Set{}
	more.Env("flag-secret-value", "${FLAG}")
	s := set.Scrubber().With(more)
	if got := s.String("a plan-secret-value b flag-secret-value"); got != "a ${PLAN} b ${FLAG}" {
		t.Errorf("scrubbed %q", got)
	}
	if got := (*Scrubber)(nil).With(more).String("flag-secret-value"); got != "${FLAG}" {
		t.Errorf("nil With: %q", got)
	}
	if (*Scrubber)(nil).With(Set{}) != nil {
		t.Error("nil With an empty set is not nil")
	}
}
