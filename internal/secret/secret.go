// Package secret keeps credentials out of everything perflab prints or
// stores. Two tools do it:
//
//   - a Scrubber replaces, in any text, each credential a run was
//     configured with (collected in a Set: from the environment, or
//     written literally in a plan or on the command line);
//   - one redaction policy masks what a description shows of a
//     credential before it is written: URL shows a URL with its user name
//     but not its password or credential query values; SensitiveName
//     tells a header, environment variable or query parameter whose value
//     is a credential; MaskParams, Headers and Args apply the same rules
//     to a workload's params, to request headers and to a command line.
//
// A ${VAR} reference names a secret without holding one: it is shown as
// written.
package secret

import (
	"cmp"
	"io"
	"os"
	"slices"
	"strings"
)

// Redacted replaces a credential written literally, in scrubbed text and
// in masked params and headers.
const Redacted = "[redacted]"

// minSecret is the length of the shortest value scrubbed from text: a
// shorter one cannot be told from the rest of the text (and is no
// credential worth the name). MaskParams masks credentials of any length.
const minSecret = 4

// Scrubber replaces, in any text, every credential a run was configured
// with: the value of a ${VAR} by its reference, a credential written
// literally by [redacted]. One is built per run (Set.Scrubber) and applied
// where text leaves perflab: the run store, the terminal (Writer) and the
// component logs. A nil Scrubber leaves text as it is.
type Scrubber struct {
	r      *strings.Replacer
	values []string // longest first
	with   map[string]string
}

// minFragment is the length of the shortest start of a credential that
// is scrubbed where a text ends in it: a message cut short before the
// scrubber saw it (a driver bounds what it keeps) must not leave the
// first part of a secret.
const minFragment = 6

// String is text scrubbed: every credential replaced, and a text that ends
// in the start of one (of minFragment characters or more, perhaps followed
// by the "..." of a cut) has that start replaced too.
func (s *Scrubber) String(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.tail(s.r.Replace(text))
}

// tail replaces the start of a credential that text ends in, before a
// trailing ellipsis, if any.
func (s *Scrubber) tail(text string) string {
	body, cut := text, ""
	for _, e := range []string{"...", "…"} {
		if strings.HasSuffix(body, e) {
			body, cut = strings.TrimSuffix(body, e), e
			break
		}
	}
	for _, v := range s.values {
		for k := len(v) - 1; k >= minFragment; k-- {
			if strings.HasSuffix(body, v[:k]) {
				return body[:len(body)-k] + s.with[v] + cut
			}
		}
	}
	return text
}

// Set collects the values a Scrubber replaces, each with what replaces it.
type Set map[string]string

// Env adds the value of an environment variable and its reference, ref
// (${NAME}).
func (set Set) Env(value, ref string) {
	if len(value) >= minSecret {
		if _, ok := set[value]; !ok {
			set[value] = ref
		}
	}
}

// Literal adds a credential written literally: after an authorization
// scheme ("Bearer xyz"), what follows it. A value with a reference in it
// (${VAR}, {{name}}) is not literal: the references' values are added as
// such.
func (set Set) Literal(value string) {
	value = strings.TrimSpace(value)
	if strings.Contains(value, "${") || strings.Contains(value, "{{") {
		return
	}
	if scheme, rest, ok := strings.Cut(value, " "); ok && authSchemes[strings.ToLower(scheme)] {
		value = strings.TrimSpace(rest)
	}
	if _, ok := set[value]; !ok && len(value) >= minSecret {
		set[value] = Redacted
	}
}

// URL adds the credentials a URL holds literally: its password and the
// values of its credential query parameters (those URL masks).
func (set Set) URL(raw string) {
	for _, v := range urlSecrets(raw) {
		set.Literal(v)
	}
}

// Header adds the credentials of a command-line header, "Name: value":
// the values of the environment variables the value reads, and the value
// itself when the name is a credential's (SensitiveName).
func (set Set) Header(line string) {
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimSpace(value)
	os.Expand(value, func(v string) string {
		set.Env(os.Getenv(v), "${"+v+"}")
		return ""
	})
	if SensitiveName(name) {
		set.Literal(value)
	}
}

// authSchemes are the schemes an Authorization value may start with.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "digest": true, "apikey": true, "negotiate": true}

// Scrubber builds the scrubber: longest values first, so that a secret
// containing another is replaced whole. An empty set gives nil.
func (set Set) Scrubber() *Scrubber {
	if len(set) == 0 {
		return nil
	}
	values := make([]string, 0, len(set))
	for v := range set {
		values = append(values, v)
	}
	slices.SortFunc(values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, set[v])
	}
	return &Scrubber{r: strings.NewReplacer(pairs...), values: values, with: set}
}

// With is s replacing the values of set too: a run's scrubber with the
// credentials of its command line added. A nil s gives set's scrubber.
func (s *Scrubber) With(set Set) *Scrubber {
	all := Set{}
	if s != nil {
		for v, with := range s.with {
			all[v] = with
		}
	}
	for v, with := range set {
		if _, ok := all[v]; !ok {
			all[v] = with
		}
	}
	return all.Scrubber()
}

// Writer scrubs what is written to an io.Writer. Each Write is scrubbed on
// its own: perflab prints a line (or a progress update) in one Write.
type Writer struct {
	w io.Writer
	s *Scrubber
}

var _ io.Writer = (*Writer)(nil)

// NewWriter is a Writer that writes to w what s scrubbed.
func NewWriter(w io.Writer, s *Scrubber) *Writer { return &Writer{w: w, s: s} }

func (sw *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, sw.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
