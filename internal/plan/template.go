package plan

import (
	"fmt"
	"strings"
)

// The built-in variables, whose values the caller of Expand supplies.
const (
	BuiltinPerflab = "perflab" // path of the running perflab binary
	BuiltinRunDir  = "run_dir" // the run directory
	BuiltinCell    = "cell"    // the cell being run (default: its name)
	// BuiltinRepetition is the repetition being run, from 1 (1 when the
	// plan runs once); a repeated run's cells also have it as a variable.
	BuiltinRepetition = "repetition"
	builtinList       = "perflab, run_dir, cell, repetition"
)

func isBuiltin(name string) bool {
	return name == BuiltinPerflab || name == BuiltinRunDir || name == BuiltinCell || name == BuiltinRepetition
}

// ref is one reference in a template: {{name}} (env false) or ${NAME}.
type ref struct {
	env  bool
	name string
}

func (r ref) String() string {
	if r.env {
		return "${" + r.name + "}"
	}
	return "{{" + r.name + "}}"
}

// substitute replaces each reference in s with what sub returns for it, and
// the escapes $${ and {{{{ with ${ and {{. The result is not scanned again.
// It fails on the first malformed reference.
func substitute(s string, sub func(ref) string) (string, error) {
	if !strings.ContainsAny(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(rest, "${"):
			name, n, ok := refName(rest[2:], "}", false)
			if !ok {
				return "", fmt.Errorf("malformed reference %q: want ${NAME}; write $${ for a literal ${", excerpt(rest))
			}
			b.WriteString(sub(ref{env: true, name: name}))
			i += 2 + n
		case strings.HasPrefix(rest, "{{{{"):
			b.WriteString("{{")
			i += 4
		case strings.HasPrefix(rest, "{{"):
			name, n, ok := refName(rest[2:], "}}", true)
			if !ok {
				return "", fmt.Errorf("malformed reference %q: want {{name}}; write {{{{ for a literal {{", excerpt(rest))
			}
			b.WriteString(sub(ref{name: name}))
			i += 2 + n
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// refs lists the references in s, or the syntax error.
func refs(s string) ([]ref, error) {
	var out []ref
	_, err := substitute(s, func(r ref) string { out = append(out, r); return "" })
	return out, err
}

// wholeRef reports whether s is exactly one reference and nothing else.
func wholeRef(s string) bool {
	switch {
	case strings.HasPrefix(s, "$${"), strings.HasPrefix(s, "{{{{"):
		return false
	case strings.HasPrefix(s, "${"):
		_, n, ok := refName(s[2:], "}", false)
		return ok && 2+n == len(s)
	case strings.HasPrefix(s, "{{"):
		_, n, ok := refName(s[2:], "}}", true)
		return ok && 2+n == len(s)
	}
	return false
}

// refName reads an identifier, optionally between spaces, followed by end.
// n counts the bytes read, end included.
func refName(s, end string, spaces bool) (name string, n int, ok bool) {
	i := 0
	skip := func() {
		for spaces && i < len(s) && s[i] == ' ' {
			i++
		}
	}
	skip()
	start := i
	for i < len(s) && isIdentByte(s[i], i == start) {
		i++
	}
	name = s[start:i]
	skip()
	if name == "" || !strings.HasPrefix(s[i:], end) {
		return "", 0, false
	}
	return name, i + len(end), true
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// isIdent reports whether s can be named in a reference.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// excerpt shortens a malformed reference for an error message.
func excerpt(s string) string {
	const max = 24
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
