package openaidriver

import (
	"fmt"
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
	// Judged is every request, failed ones too, when Config.Goodput is
	// set; Good those of them that met every bound.
	Judged, Good int64
}

// tally counts Stats across VUs.
type tally struct {
	requests, withUsage, prompt, output, judged, good atomic.Int64
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
		PromptTokens: t.prompt.Load(), OutputTokens: t.output.Load(), Judged: t.judged.Load(), Good: t.good.Load()}
}

// Facts describes the workload (no secret: see Config.Redacted) and the
// tokens counted over the whole run. Rates and the time to first token,
// inter-token latency and time per output token are not facts: they are
// measured per operation and interval (Result.Measures, Result.Counters)
// and reported over the steady-state window.
func (d *Driver) Facts() []driver.Fact {
	s := d.Stats()
	facts := []driver.Fact{{Name: "api", Value: d.cfg.Redacted()}}
	if n := d.reqs.count(); n > 0 {
		facts = append(facts, driver.Fact{Name: "prompts", Value: strconv.Itoa(n)})
	} else {
		facts = append(facts, driver.Fact{Name: "seed", Value: d.seedText()})
	}
	facts = append(facts,
		driver.Fact{Name: "successful requests", Value: strconv.FormatInt(s.Requests, 10)},
		driver.Fact{Name: "answers with usage", Value: strconv.FormatInt(s.WithUsage, 10)},
		driver.Fact{Name: "prompt tokens", Value: strconv.FormatInt(s.PromptTokens, 10)},
		driver.Fact{Name: "output tokens", Value: strconv.FormatInt(s.OutputTokens, 10)})
	if g := d.cfg.Goodput; g != nil {
		facts = append(facts, driver.Fact{Name: "goodput", Value: fmt.Sprintf("%d of %d requests met %s (whole run)", s.Good, s.Judged, g)})
	}
	return facts
}

// seedText is the seed the requests were drawn with, and how to draw the
// same again when perflab picked it.
func (d *Driver) seedText() string {
	s := strconv.FormatInt(d.seed, 10)
	if d.cfg.Seed == 0 {
		s += " (picked at random: seed: " + s + " sends the same requests again)"
	}
	return s
}
