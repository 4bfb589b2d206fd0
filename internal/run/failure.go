package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/results"
)

// Exit codes, as perflab exits with them and as the run store records
// them.
const (
	ExitOK          = 0
	ExitFailed      = 1 // the run ran but failed: target unreachable, all requests failed, store errors
	ExitUsage       = 2 // invalid arguments or plan; nothing was started
	ExitInterrupted = 130
)

// Failure is a run that did not succeed, or a job refused before it
// started: the error, the exit code and what the user should do. Also are
// further errors of the run's last steps, told before it.
type Failure struct {
	Err  error
	Hint string
	Code int
	Also []error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// failed is a Failure of a run that ran.
func failed(err error, hint string) *Failure {
	return &Failure{Err: err, Hint: hint, Code: ExitFailed}
}

// Invalid is a Failure of a job refused before anything started (exit 2).
func Invalid(format string, a ...any) *Failure {
	return &Failure{Err: fmt.Errorf(format, a...), Code: ExitUsage}
}

// storeHalted is the cause of a run's stop context ended by its store.
type storeHalted struct{ err error }

func (s *storeHalted) Error() string { return "the run store failed: " + s.err.Error() }
func (s *storeHalted) Unwrap() error { return s.err }

// Halted wraps err as the cause of a load stopped because its store
// failed (a worker's shared store, say).
func Halted(err error) error { return &storeHalted{err: err} }

// IsHalted reports whether err is such a cause.
func IsHalted(err error) bool {
	var h *storeHalted
	return errors.As(err, &h)
}

// Stopped is the state and message of a cell or phase cut short by the
// end of stop: interrupted by a signal, or failed with the run store.
func Stopped(stop context.Context) (state, message string) {
	var h *storeHalted
	if errors.As(context.Cause(stop), &h) {
		return results.StateFailed, "stopped: " + h.Error()
	}
	return results.StateInterrupted, "stopped by a signal"
}

// OneLine joins a message's lines (such as a component's last log lines)
// into one.
func OneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

// Plural is "1 workload", "2 workloads".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
