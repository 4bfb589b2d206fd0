package plan

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a plan file; lines and columns count from 1. The zero
// Pos means "no position known" (a value built in Go rather than decoded).
// In a plan built from a command line (perflab http) a value's position
// is the flag that gave it.
type Pos struct {
	Line, Col int
	Flag      string // "--vus-max": the flag that gave the value; "" in a plan file
}

// Error is one problem in a plan, at a position in its file or at the
// flag that gave the value.
type Error struct {
	File      string
	Line, Col int    // 0 when unknown
	Flag      string // the flag that gave the value, in a plan built from a command line
	Msg       string
}

// Error prints "file:line:col: msg", leaving out what is unknown; a
// problem with a flag's value is "--flag: msg", or msg alone when it names
// the flag itself ("--vus-min 20 is larger than --vus-max 10").
func (e Error) Error() string {
	if e.Flag != "" {
		if namesFlag(e.Msg, e.Flag) {
			return e.Msg
		}
		return e.Flag + ": " + e.Msg
	}
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, "%d:", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a plan, sorted by position. Parse and
// Load return it as their error; use errors.As to get at the items.
type Errors []Error

// Error prints one problem per line, at most MaxListed; see List.
func (es Errors) Error() string {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return List(errs)
}

// MaxListed is how many problems a list of them shows: a plan with
// thousands of problems shows its first ones and counts the others.
const MaxListed = 50

// List prints problems one per line, the first MaxListed of them, then
// how many more there are: "… and 24,950 more problems".
func List(problems []error) string {
	n := min(len(problems), MaxListed)
	lines := make([]string, n, n+1)
	for i, p := range problems[:n] {
		lines[i] = p.Error()
	}
	if more := len(problems) - n; more > 0 {
		lines = append(lines, "… and "+plural(more, "more problem"))
	}
	return strings.Join(lines, "\n")
}

// sorted orders es by file, line, column and message, and drops duplicates.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		// equivalent mutants: < made <= below; each compares only values
		// found different just before.
		a, b := es[i], es[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Msg < b.Msg
	})
	out := es[:0]
	for i, e := range es {
		if i == 0 || e != es[i-1] {
			out = append(out, e)
		}
	}
	return out
}

// namesFlag reports whether msg names flag as a word of its own: "-d" is
// not named by "--duration".
func namesFlag(msg, flag string) bool {
	word := func(c byte) bool {
		return c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], flag)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(flag)
		if (start == 0 || !word(msg[start-1])) && (end == len(msg) || !word(msg[end])) {
			return true
		}
		i = start + 1
	}
}

// asErrors turns errs into Errors, keeping the positions of those that are
// Error values already and giving the others the file name only.
func asErrors(file string, errs []error) Errors {
	out := make(Errors, 0, len(errs))
	for _, err := range errs {
		if e, ok := err.(Error); ok {
			out = append(out, e)
		} else {
			out = append(out, Error{File: file, Msg: err.Error()})
		}
	}
	return out
}

// where records the positions of a decoded value's fields: "" is the value
// itself, "name" a field's value, "args.2" a list item, "env.TOKEN" a map
// value. A key with a "!" suffix marks a field whose value could not be
// decoded, so that Validate does not report it a second time.
type where map[string]Pos

func (w where) pos(key string) Pos {
	if p, ok := w[key]; ok {
		return p
	}
	return w[""]
}

// name is how a problem names the field key: the flag that gave it, in a
// plan built from a command line, else plain, the plan file's word for it.
func (w where) name(key, plain string) string {
	if p, ok := w[key]; ok && p.Flag != "" {
		return p.Flag
	}
	return plain
}

// bad reports whether key failed to decode.
func (w where) bad(key string) bool {
	_, ok := w[key+"!"]
	return ok
}

// has reports whether key was given in the file.
func (w where) has(key string) bool {
	_, ok := w[key]
	return ok
}

// Pos returns where the value of key ("driver", "rate", "params", …) of the
// workload is in the plan file, or where the workload starts when key was
// not given: for callers that check what this package leaves opaque
// (drivers and their params) to report problems in place.
func (w Workload) Pos(key string) Pos { return w.at.pos(key) }

// Pos is Workload.Pos for a component ("run", "metrics", …).
func (c Component) Pos(key string) Pos { return c.at.pos(key) }

// Pos is Workload.Pos for how a component is started ("command", "dir", …).
func (r Run) Pos(key string) Pos { return r.at.pos(key) }

// ErrorAt is a problem at pos in the plan file, or at the flag pos names.
func ErrorAt(file string, pos Pos, format string, a ...any) error {
	return Error{File: file, Line: pos.Line, Col: pos.Col, Flag: pos.Flag, Msg: fmt.Sprintf(format, a...)}
}

// Problems is err as a list: the items of a plan.Errors, else err alone.
func Problems(err error) []error {
	var pe Errors
	if errors.As(err, &pe) {
		out := make([]error, len(pe))
		for i, e := range pe {
			out[i] = e
		}
		return out
	}
	return []error{err}
}
