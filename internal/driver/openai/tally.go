package openaidriver

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// tallyShards spreads the VUs' counting over this many locks. Each shard
// holds an inter-token histogram (a few hundred KiB), made on first use.
const tallyShards = 8

// Stats is what a Driver counted since New, over successful operations
// (Span excepted: it covers every operation).
type Stats struct {
	Requests     int64 // successful operations
	WithUsage    int64 // of them, those whose answer reported usage
	PromptTokens int64 // usage's prompt_tokens, summed
	// OutputTokens is usage's completion_tokens when reported, else one per
	// content event of a stream; summed.
	OutputTokens int64
	// Span is from the start of the first operation to the end of the
	// last: the time the OutputTokens took, warm-up included.
	Span time.Duration
	// InterToken holds the time between consecutive content events of
	// every stream; nil when no stream had two.
	InterToken *stats.Hist
	Gaps       int64         // inter-token gaps measured
	GapTime    time.Duration // their sum
}

// OutputTokensPerSecond is the throughput: output tokens per second of
// Span, over all VUs; 0 without a span.
func (s Stats) OutputTokensPerSecond() float64 {
	if s.Span <= 0 {
		return 0
	}
	return float64(s.OutputTokens) / s.Span.Seconds()
}

// DecodeTokensPerSecond is how fast a stream delivers tokens once they
// flow, 1 / mean inter-token latency; 0 when nothing was streamed.
func (s Stats) DecodeTokensPerSecond() float64 {
	if s.GapTime <= 0 {
		return 0
	}
	return float64(s.Gaps) / s.GapTime.Seconds()
}

// outcome is what one successful operation adds to the tally.
type outcome struct {
	usage  *usage
	events int64           // content events of a stream
	gaps   []time.Duration // between them
}

type tally struct {
	shards      [tallyShards]tallyShard
	first, last atomic.Int64 // ns since epoch of the first start and last end; first is MaxInt64 until set
	epoch       time.Time
}

type tallyShard struct {
	mu sync.Mutex
	s  Stats
	_  [64]byte // keep shards' locks apart
}

func (t *tally) init() {
	t.epoch = time.Now()
	t.first.Store(math.MaxInt64)
}

// span widens the span to cover an operation.
func (t *tally) span(start, end time.Time) {
	s, e := int64(start.Sub(t.epoch)), int64(end.Sub(t.epoch))
	for cur := t.first.Load(); s < cur && !t.first.CompareAndSwap(cur, s); cur = t.first.Load() {
	}
	for cur := t.last.Load(); e > cur && !t.last.CompareAndSwap(cur, e); cur = t.last.Load() {
	}
}

func (t *tally) add(vu int, o outcome) {
	sh := &t.shards[uint(max(vu, 0))%tallyShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := &sh.s
	s.Requests++
	if o.usage != nil {
		s.WithUsage++
		s.PromptTokens += o.usage.PromptTokens
		s.OutputTokens += o.usage.CompletionTokens
	} else {
		s.OutputTokens += o.events
	}
	if len(o.gaps) > 0 && s.InterToken == nil {
		s.InterToken = stats.NewHist()
	}
	for _, g := range o.gaps {
		s.InterToken.Record(g)
		s.GapTime += g
	}
	s.Gaps += int64(len(o.gaps))
}

// Stats returns what the driver counted so far; safe during the run.
func (d *Driver) Stats() Stats {
	var out Stats
	for i := range d.tally.shards {
		sh := &d.tally.shards[i]
		sh.mu.Lock()
		s := sh.s
		out.Requests += s.Requests
		out.WithUsage += s.WithUsage
		out.PromptTokens += s.PromptTokens
		out.OutputTokens += s.OutputTokens
		out.Gaps += s.Gaps
		out.GapTime += s.GapTime
		if s.InterToken != nil {
			if out.InterToken == nil {
				out.InterToken = stats.NewHist()
			}
			out.InterToken.Merge(s.InterToken)
		}
		sh.mu.Unlock()
	}
	if first, last := d.tally.first.Load(), d.tally.last.Load(); first != math.MaxInt64 && last > first {
		out.Span = time.Duration(last - first)
	}
	return out
}

// Facts describes the workload (no secret: see Config.Redacted) and the
// token figures counted so far.
func (d *Driver) Facts() []driver.Fact {
	s := d.Stats()
	ttfb := "time to first response byte (whole answers)"
	if d.cfg.Stream {
		ttfb = "time to first token (first content event of the stream)"
	}
	facts := []driver.Fact{
		{Name: "api", Value: d.cfg.Redacted()},
		{Name: "prompts", Value: strconv.Itoa(len(d.bodies))},
		{Name: "ttfb means", Value: ttfb},
		{Name: "successful requests", Value: strconv.FormatInt(s.Requests, 10)},
		{Name: "answers with usage", Value: strconv.FormatInt(s.WithUsage, 10)},
		{Name: "prompt tokens", Value: strconv.FormatInt(s.PromptTokens, 10)},
		{Name: "output tokens", Value: strconv.FormatInt(s.OutputTokens, 10)},
		{Name: "output tokens/s", Value: num(s.OutputTokensPerSecond())},
	}
	if h := s.InterToken; h != nil {
		facts = append(facts,
			driver.Fact{Name: "decode tokens/s (per stream)", Value: num(s.DecodeTokensPerSecond())},
			driver.Fact{Name: "inter-token latency mean", Value: dur(s.GapTime / time.Duration(s.Gaps))},
			driver.Fact{Name: "inter-token latency p50", Value: dur(h.Quantile(0.5))},
			driver.Fact{Name: "inter-token latency p99", Value: dur(h.Quantile(0.99))},
		)
	}
	return facts
}

// num formats v with three significant digits at most, no exponent.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// dur formats d with about three significant digits, e.g. 10.2ms.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return num(d.Seconds()) + "s"
	case d >= time.Millisecond:
		return num(float64(d)/float64(time.Millisecond)) + "ms"
	}
	return num(float64(d)/float64(time.Microsecond)) + "µs"
}
