package cli

import (
	"github.com/perflab/perflab/internal/secret"
)

// useScrubber makes s the scrubber of e's run: of the store it creates
// and of everything it prints from now on, errors included.
func (e *env) useScrubber(s *secret.Scrubber) {
	if s == nil {
		return
	}
	e.scrub = s
	e.stdout, e.stderr = secret.NewWriter(e.stdout, s), secret.NewWriter(e.stderr, s)
}

// recordedCommand is a command line as a run records it: shell-quoted,
// with its credentials masked (secret.Args).
func recordedCommand(argv []string) string {
	return shellJoin(secret.Args(argv))
}
