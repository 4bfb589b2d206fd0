package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
)

// compare is `perflab compare RUN_A RUN_B [RUN_C…] [--force] [--format
// md|json]` (each later run against the first) or `perflab compare --a RUN
// --a RUN --b RUN --b RUN` (repeated runs per side).
func (e *env) compare(args []string) error {
	fs := newFlagSet("compare", e)
	var as, bs listFlag
	fs.Var(&as, "a", "a run of side A (repeat for repeated runs)")
	fs.Var(&bs, "b", "a run of side B (repeat for repeated runs)")
	force := fs.Bool("force", false, "compare although the workloads differ (driver, model, target rate or concurrency, params)")
	format := fs.String("format", "md", report.FormatNames(hasCompare, true))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab compare RUN_A RUN_B [RUN…] | --a RUN [--a RUN…] --b RUN [--b RUN…]  [--force] [--format "+
			formatChoice(hasCompare)+"]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	sides, problems := compareSides(pos, as, bs)
	f, ok := report.FormatNamed(*format)
	if !ok || f.Compare == nil {
		problems = append(problems, fmt.Sprintf("--format %q: want %s", *format, report.FormatNames(hasCompare, false)))
	}
	if len(problems) > 0 {
		return usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	loaded := map[string]*readback.Compared{}
	for _, dir := range slices.Concat(sides...) {
		if loaded[dir] == nil {
			if loaded[dir], err = loadCompared(dir); err != nil {
				return err
			}
		}
	}
	a := pick(loaded, sides[0])
	for _, b := range sides[1:] {
		c, err := readback.Compare(a, pick(loaded, b), *force)
		var refused *readback.Refusal
		if errors.As(err, &refused) {
			return usageErrorf("%v", err)
		}
		if err != nil {
			return err
		}
		if err := f.Compare(e.stdout, c); err != nil {
			return err
		}
	}
	return nil
}

// hasCompare keeps the formats a comparison is rendered in.
func hasCompare(f report.Format) bool { return f.Compare != nil }

// formatChoice is the names of the formats keep selects as a usage line
// gives them: "md|json".
func formatChoice(keep func(report.Format) bool) string {
	var names []string
	for _, f := range report.Formats {
		if keep(f) {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, "|")
}

// compareSides is side A and one or more sides B, as run directories.
func compareSides(pos, as, bs []string) ([][]string, []string) {
	switch {
	case len(as) > 0 || len(bs) > 0:
		var problems []string
		if len(pos) > 0 {
			problems = append(problems, "give the runs either as arguments or with --a and --b, not both")
		}
		if len(as) == 0 || len(bs) == 0 {
			problems = append(problems, "--a and --b each need at least one run")
		}
		return [][]string{as, bs}, problems
	case len(pos) < 2:
		return nil, []string{fmt.Sprintf("perflab compare needs two run directories or more, got %d", len(pos))}
	}
	sides := [][]string{{pos[0]}}
	for _, p := range pos[1:] {
		sides = append(sides, []string{p})
	}
	return sides, nil
}

func pick(loaded map[string]*readback.Compared, dirs []string) []*readback.Compared {
	out := make([]*readback.Compared, len(dirs))
	for i, d := range dirs {
		out[i] = loaded[d]
	}
	return out
}

// loadCompared reads the run directory dir, given on the command line,
// for a comparison.
func loadCompared(dir string) (*readback.Compared, error) {
	store, err := openRun(dir, "directories")
	if err != nil {
		return nil, err
	}
	defer store.Close()
	c, err := readback.ForCompare(store, dir)
	if err != nil {
		return nil, &runError{err: err, code: ExitFailed}
	}
	return c, nil
}
