package cli

import (
	"strings"

	"github.com/perflab/perflab/internal/slo"
)

const sloUsage = `SLO gate judged on every workload over its steady-state window, e.g. 'p99 < 200ms', 'error_rate < 0.1%', 'dropped == 0' (repeatable); the command exits 1 when a gate fails or has insufficient data`

// checkSLOFlags parses the --slo expressions, reporting every one that
// does not parse as a usage error.
func checkSLOFlags(exprs []string) error {
	if lines := sloProblems(exprs); len(lines) > 0 {
		return usageErrorf("invalid SLO gate:\n  %s", strings.Join(lines, "\n  "))
	}
	return nil
}

// sloProblems says what is wrong with each --slo expression that does not
// parse.
func sloProblems(exprs []string) []string {
	_, errs := slo.ParseGates(exprs)
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = "--slo: " + err.Error()
	}
	return lines
}

// shellJoin joins a command's arguments as a shell would need them:
// arguments with spaces or shell characters in single quotes, so that a
// stored command such as perflab run plan.yaml --slo 'p99 < 200ms' can be
// run again as shown.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n<>|&;()$`\\\"'*?[]#~{}!") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
