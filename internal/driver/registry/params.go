package registry

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/plan"
)

// paramKeys is where each top-level key of a workload's params is in the
// plan file, for placing the problems a driver's Config.Validate finds,
// which name the field they are about but know no positions.
type paramKeys struct {
	in Input
	at map[string]locator
}

// decodeConfig decodes in's params strictly into cfg, a pointer to a
// driver's Config (unknown keys, duplicates and wrong types at their
// positions), and returns where each top-level key is.
func decodeConfig(in Input, cfg any) (paramKeys, []error) {
	var errs []error
	if err := in.Params.Decode(cfg); err != nil { // go on: what decoded may have problems too
		errs = plan.Problems(err)
	}
	keys := paramKeys{in: in, at: map[string]locator{}}
	var at map[string]located[any]
	if in.Params.Decode(&at) == nil {
		for k, v := range at {
			keys.at[k] = v.locator
		}
	}
	return keys, errs
}

// resolve makes a relative path in the params relative to the plan's
// directory, as the plan format does for its own paths.
func (k paramKeys) resolve(path *string) {
	if *path != "" && !filepath.IsAbs(*path) {
		*path = filepath.Join(k.in.Dir, *path)
	}
}

// errorf is a problem at key's position, or at the params when the plan
// does not give key.
func (k paramKeys) errorf(key, format string, a ...any) error {
	return k.at[key].or(k.in.Params.Pos()).errorf(k.in.File, format, a...)
}

// place puts each of a Config's problems at the key it is about: the
// present key its message mentions first, else the params.
func (k paramKeys) place(errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		msg := err.Error()
		out = append(out, k.errorf(k.keyOf(msg), "params: %s", msg))
	}
	return out
}

// keyAliases are other ways problems name a key.
var keyAliases = map[string][]string{
	"headers": {"header"},
	"ca_file": {"ca file"},
}

// keyOf is the present key msg mentions first, as a whole word; "" when
// it mentions none.
func (k paramKeys) keyOf(msg string) string {
	names := make([]string, 0, len(k.at))
	for key := range k.at {
		names = append(names, key)
	}
	sort.Strings(names) // a tie goes to the same key every time
	best, bestAt := "", len(msg)+1
	for _, key := range names {
		for _, name := range append([]string{key}, keyAliases[key]...) {
			if i := wordIndex(msg, name); i >= 0 && (i < bestAt || i == bestAt && len(key) > len(best)) {
				best, bestAt = key, i
			}
		}
	}
	return best
}

// wordIndex is the index of word in s where it stands alone (not inside a
// longer name such as query_url for url), or -1.
func wordIndex(s, word string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(word)
		if (i == 0 || !nameByte(s[i-1])) && (end == len(s) || !nameByte(s[end])) {
			return i
		}
		from = i + 1
	}
}

func nameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
