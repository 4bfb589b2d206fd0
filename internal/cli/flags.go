package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// newFlagSet is the flag set of the command perflab NAME ("http", "k8s
// run"), with --quiet, which every command takes. It prints nothing while
// it parses: a bad flag is one line of
// error (flagError), and --help writes the usage to stdout.
func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&e.quiet, "quiet", e.quiet, "print no progress, notes or file locations on stderr: warnings and errors alone")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: perflab %s [flags]\n", name)
		fs.PrintDefaults()
	}
	return fs
}

// flagError maps a flag parsing error of fs: --help writes the command's
// usage to stdout and is no failure; anything else is a usage error of
// one line, with the flag meant when one is near the one given, and where
// to read the rest.
func (e *env) flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		fs.Usage()
		return flag.ErrHelp
	}
	return &usageError{msg: flagProblem(fs, err), see: "perflab " + fs.Name() + " --help"}
}

// flagProblem says what is wrong with a flag, in perflab's words:
// "unknown flag --rat; did you mean --rate?", `--duration "10": want a
// duration like 10s or 1m30s`.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if near := nearestFlag(fs, name); near != "" {
			return fmt.Sprintf("unknown flag %s; did you mean %s?", dashed(name), dashed(near))
		}
		return "unknown flag " + dashed(name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = dashed(strings.TrimLeft(name, "-"))
		return name + " needs a value: " + name + " VALUE"
	}
	var value, name string
	if n, _ := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); n == 2 {
		name = strings.TrimSuffix(name, ":")
		_, why, _ := strings.Cut(msg, ": ")
		if want := wantOf(fs.Lookup(name)); want != "" {
			why = want
		}
		return fmt.Sprintf("%s %q: %s", dashed(name), value, why)
	}
	return msg
}

// dashed is a flag's name as it is written: -c, --rate.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// wantOf says what a flag of a built-in kind takes, with an example;
// "" for a flag of perflab's own kind, whose error says it.
func wantOf(fl *flag.Flag) string {
	if fl == nil {
		return ""
	}
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration like 10s or 1m30s (units ns, us, ms, s, m, h)"
	case int, int64, uint, uint64:
		return "want a whole number, like 10"
	case float64:
		return "want a number, like 1.5"
	case bool:
		return "want true or false"
	}
	return ""
}

// nearestFlag is the flag of fs whose name is nearest to name: one that
// starts with it, else one within a third of its letters' edits (at
// least one); "" when none is that near, or name is too short to tell.
func nearestFlag(fs *flag.FlagSet, name string) string {
	if len(name) < 2 {
		return ""
	}
	best, bestDist := "", max(1, len(name)/3)+1
	fs.VisitAll(func(fl *flag.Flag) {
		d := editDistance(name, fl.Name)
		if strings.HasPrefix(fl.Name, name) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = fl.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
