package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/builtin"
)

// targetGateway serves the built-in gateway, a reverse proxy with a fixed
// added delay, until interrupted.
func (e *env) targetGateway(ctx context.Context, args []string) error {
	var cfg builtin.GatewayConfig
	fs := newFlagSet("target gateway", e)
	addr := fs.String("addr", "127.0.0.1:8081", "loopback address to listen on (127.0.0.1:0 picks a free port)")
	fs.StringVar(&cfg.Upstream, "upstream", "", "base URL to forward requests to, on loopback, e.g. http://127.0.0.1:8080 (required)")
	fs.DurationVar(&cfg.Delay, "delay", 0, "fixed delay added to every request before it is forwarded")
	fs.DurationVar(&cfg.HoldFirst, "hold-first", 0, "hold the first piece of every answer this long, as a gateway buffering a stream's start does (adds to the time to first token)")
	if err := fs.Parse(args); err != nil {
		return e.flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("perflab target gateway takes no arguments, got %q", fs.Args())
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		problems := make([]string, len(errs))
		for i, err := range errs {
			problems[i] = err.Error()
		}
		return usageErrorf("invalid gateway:\n  %s", strings.Join(problems, "\n  "))
	}
	g, err := builtin.NewGateway(cfg)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer g.Close()
	ln, err := builtin.ListenLoopback(*addr)
	if err != nil {
		return usageErrorf("%v", err)
	}
	stop, _, release := e.signals(ctx)
	defer release()
	fmt.Fprintf(e.stdout, "perflab target gateway listening on http://%s (forwarding to %s after %v; its own /metrics and /health)\n",
		ln.Addr(), cfg.Upstream, cfg.Delay)
	return g.Serve(stop, ln)
}
