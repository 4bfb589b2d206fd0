package stats

import (
	"fmt"
	"time"
)

// Measure is a duration a driver measures besides the operation's latency,
// kept as a histogram per operation per interval exactly like latency, so
// that intervals, shards and workers merge it exactly. The set is closed,
// like Class: a driver that needs another (the parts of an S3 multipart
// upload, say) adds a constant and its name here.
type Measure uint8

// The measures, in the order reports list them.
const (
	// TTFT is the time to first token of a stream: from the start of the
	// request to the first event that carries content. One value per
	// successful stream that carried any.
	TTFT Measure = iota
	// TTST is the time to second token, as AIPerf defines it: from the
	// first content event of a stream to the second, so that TTFT + TTST
	// is when the second token arrived. One value per successful stream
	// with two content events or more.
	TTST
	// ITL is the inter-token latency: the time between two consecutive
	// content events of a stream. One value per gap, so a stream of n
	// content events gives n−1 values, as vLLM's benchmark counts it; a
	// pause in the middle of a stream shows in the tail, where a mean per
	// stream would hide it.
	ITL
	// TPOT is the time per output token after the first, one value per
	// stream: (end of the stream − first token) / (output tokens − 1),
	// for streams of at least two output tokens.
	TPOT
	// PromptLength and OutputLength are lengths, not durations: the prompt
	// and output tokens of one successful operation, one value each,
	// recorded as that many microseconds (LengthTiming) so that they merge
	// exactly like the timings; Tokens reads a figure back. A length of 0
	// is not recorded.
	PromptLength
	OutputLength
	// NTPOT is the normalized time per output token, as GuideLLM and
	// inference-perf define it: the whole request's time from its actual
	// start (not its intended one) / its output tokens, one value per successful request with any, streamed or
	// not, so that it compares across the two and across tools. (Listed
	// after the lengths, which have a table of their own, so the stored
	// names keep their numbers.)
	NTPOT
	NumMeasures
)

var measureNames = [NumMeasures]string{TTFT: "ttft", TTST: "ttst", ITL: "itl", TPOT: "tpot",
	PromptLength: "prompt_length", OutputLength: "output_length", NTPOT: "ntpot"}

// IsLength reports whether m is a length in tokens rather than a duration.
func (m Measure) IsLength() bool { return m == PromptLength || m == OutputLength }

// LengthTiming is the value of a length measure m for n tokens.
func LengthTiming(m Measure, n int64) Timing {
	return Timing{Measure: m, D: time.Duration(n) * time.Microsecond}
}

// Tokens is the number of tokens a figure of a length measure stands for.
func Tokens(d time.Duration) int64 { return int64(d / time.Microsecond) }

func (m Measure) String() string {
	if m < NumMeasures {
		return measureNames[m]
	}
	return fmt.Sprintf("measure(%d)", uint8(m))
}

// ParseMeasure is the inverse of Measure.String.
func ParseMeasure(s string) (Measure, error) {
	for i, n := range measureNames {
		if n == s {
			return Measure(i), nil
		}
	}
	return 0, fmt.Errorf("unknown measure %q", s)
}

// Timing is one value of a measure.
type Timing struct {
	Measure Measure
	D       time.Duration
}

// Counter is a quantity a driver counts per operation besides bytes,
// summed per operation per interval, so that reports can give it as a rate
// over the steady-state window. The set is closed, like Measure.
type Counter uint8

// The counters, in the order reports list them.
const (
	PromptTokens Counter = iota // input tokens, as the answer's usage reports them
	OutputTokens                // output tokens: the usage's, else one per content event of a stream
	// GoodputJudged counts the operations judged against goodput bounds
	// (the openai driver's goodput params): every one, failed ones too,
	// of a workload that has bounds; Goodput those that met every bound.
	GoodputJudged
	Goodput
	// BodyBytes is the body bytes of an HTTP answer, where BytesRecv
	// counts the whole answer (status line, headers, framing, body).
	BodyBytes
	// Retries counts requests sent once more on a new connection, the
	// reused one having closed before any byte of their answer.
	Retries
	// IdleCloses counts kept-alive connections found closed by the
	// server when they were to carry the next request: a new one was
	// opened, no request failed.
	IdleCloses
	// StrayAnswers counts connections closed because the server wrote
	// bytes no request asked for: behind a complete answer, or while the
	// connection was idle.
	StrayAnswers
	NumCounters
)

var counterNames = [NumCounters]string{PromptTokens: "prompt_tokens", OutputTokens: "output_tokens",
	GoodputJudged: "goodput_judged", Goodput: "goodput", BodyBytes: "body_bytes",
	Retries: "retries", IdleCloses: "idle_closes", StrayAnswers: "stray_answers"}

// Connection tells whether c is one of the HTTP driver's counts of its
// answers and connections (BodyBytes onwards), not of the workload's
// tokens.
func (c Counter) Connection() bool { return c >= BodyBytes && c < NumCounters }

func (c Counter) String() string {
	if c < NumCounters {
		return counterNames[c]
	}
	return fmt.Sprintf("counter(%d)", uint8(c))
}

// ParseCounter is the inverse of Counter.String.
func ParseCounter(s string) (Counter, error) {
	for i, n := range counterNames {
		if n == s {
			return Counter(i), nil
		}
	}
	return 0, fmt.Errorf("unknown counter %q", s)
}
