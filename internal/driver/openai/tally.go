package openaidriver

import (
	"strconv"
	"sync/atomic"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// Stats is what a Driver counted since New, over successful operations.
// The same tokens go, per operation, into Result.Counters, from which the
// recorder makes per-interval rates; Stats is the whole run's total, for
// the facts.
type Stats struct {
	Requests     int64 // successful operations
	WithUsage    int64 // of them, those whose answer reported usage
	PromptTokens int64 // usage's prompt_tokens, summed
	// OutputTokens is usage's completion_tokens when reported, else one per
	// content event of a stream; summed.
	OutputTokens int64
}

// tally counts Stats across VUs.
type tally struct {
	requests, withUsage, prompt, output atomic.Int64
}

// add counts one successful operation whose Counters r holds.
func (t *tally) add(r *driver.Result, withUsage bool) {
	t.requests.Add(1)
	if withUsage {
		t.withUsage.Add(1)
	}
	t.prompt.Add(r.Counters[stats.PromptTokens])
	t.output.Add(r.Counters[stats.OutputTokens])
}

// Stats returns what the driver counted so far; safe during the run.
func (d *Driver) Stats() Stats {
	t := &d.tally
	return Stats{Requests: t.requests.Load(), WithUsage: t.withUsage.Load(),
		PromptTokens: t.prompt.Load(), OutputTokens: t.output.Load()}
}

// Facts describes the workload (no secret: see Config.Redacted) and the
// tokens counted over the whole run. Rates and the time to first token,
// inter-token latency and time per output token are not facts: they are
// measured per operation and interval (Result.Measures, Result.Counters)
// and reported over the steady-state window.
func (d *Driver) Facts() []driver.Fact {
	s := d.Stats()
	return []driver.Fact{
		{Name: "api", Value: d.cfg.Redacted()},
		{Name: "prompts", Value: strconv.Itoa(len(d.bodies))},
		{Name: "successful requests", Value: strconv.FormatInt(s.Requests, 10)},
		{Name: "answers with usage", Value: strconv.FormatInt(s.WithUsage, 10)},
		{Name: "prompt tokens", Value: strconv.FormatInt(s.PromptTokens, 10)},
		{Name: "output tokens", Value: strconv.FormatInt(s.OutputTokens, 10)},
	}
}
