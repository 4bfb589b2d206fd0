// Package driver defines what the engine asks of a protocol driver: perform
// one operation and describe its outcome. Failed operations are data, never
// Go errors: each driver maps what went wrong to a stats.Class.
package driver

import (
	"context"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// MaxMessage bounds Result.Message, in bytes: larger than an error sample
// as a run stores it (200 bytes), so that the run's scrubber sees a
// credential in a message whole before the sample is cut.
const MaxMessage = 1024

// Result is the outcome of one operation, filled in by Driver.Do. The engine
// owns timing from the intended start; the driver reports what only it can
// see: the operation's name, bytes, time to first byte, the class, and the
// measures and counters of its protocol.
type Result struct {
	Op        string        // operation name, e.g. "GET /" or "chat"
	TTFB      time.Duration // from the start of Do to the first response byte; 0 if none
	Connect   time.Duration // time to open a new connection (dial + TLS); 0 when one was reused
	BytesSent int64
	BytesRecv int64
	Class     stats.Class
	Message   string // the error, when Class is not OK
	// Measures are the operation's other timings, each kept as a
	// histogram per operation like latency: the openai driver's time to
	// first token, every inter-token gap and the time per output token.
	// A measure may have many values in one operation. The engine hands
	// Do a Result whose Measures is empty but keeps its capacity, so a
	// driver that appends to it (resetting r with Reset)
	// allocates only until the slice is as long as its longest operation
	// needs. Each measure's meaning is documented at stats.Measure.
	Measures []stats.Timing
	// Counters are quantities counted per operation, summed per interval
	// (the openai driver's prompt and output tokens).
	Counters [stats.NumCounters]int64
}

// Reset empties r for the next operation named op, keeping the capacity of
// its Measures.
func (r *Result) Reset(op string) {
	*r = Result{Op: op, Measures: r.Measures[:0]}
}

// Driver performs operations against a system under test. Do must be safe
// for concurrent use by many VUs, return promptly once ctx is done, and
// classify a cancelled ctx as stats.Interrupted.
type Driver interface {
	Do(ctx context.Context, vu int, r *Result)
}

// Closer is implemented by drivers that hold resources (connections, files)
// to release after the run.
type Closer interface {
	Close() error
}

// Fact is one named figure a driver reports about its workload, such as the
// mean encoded size of a generated payload or a rate derived from it.
// Value is already formatted for people to read. It is the one fact type
// of a run: a worker's shard detail (docs/format/shards.md) carries it in
// this JSON form, the run store and the reports keep it as it is.
type Fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Describer is implemented by drivers that report facts about their
// workload. Facts may be called at any time after New and after the run.
type Describer interface {
	Facts() []Fact
}

// States of a read-back check.
const (
	// CheckOK: everything written was found at the first look.
	CheckOK = "ok"
	// CheckLate: everything written was found, some of it only on a
	// re-check (Check.Late, Check.LateBy): the system makes data readable
	// late, it did not lose it.
	CheckLate = "late"
	// CheckLost: written data was still missing when the driver stopped
	// re-checking. Only this state means data loss.
	CheckLost = "lost"
	// CheckUnverified: the driver could not get an answer (the query was
	// refused, a 5xx, an auth error, no connection); Check.Reason says
	// why. Found is what the answers it got showed, not a loss.
	CheckUnverified = "unverified"
)

// Check is one read-back check: how much of what the driver wrote was
// found again, and in which State the check ended. It is the one check
// type of a run, from the driver through a worker's shard detail (this
// JSON form, docs/format/shards.md) and the run store to the reports.
type Check struct {
	Name     string  `json:"name"`
	Expected float64 `json:"expected"`
	Found    float64 `json:"found"`
	Unit     string  `json:"unit,omitempty"`
	State    string  `json:"state"` // one of the Check states
	// Late is how much of Found showed only on a re-check, and LateBy
	// the longest time after its write that late data took to show.
	Late   float64       `json:"late,omitempty"`
	LateBy time.Duration `json:"late_by_ns,omitempty"`
	Reason string        `json:"reason,omitempty"` // why the check is unverified; "" otherwise
	Note   string        `json:"note,omitempty"`
}

// Shortfall is how much of what was expected was not found.
func (c Check) Shortfall() float64 { return max(c.Expected-c.Found, 0) }

// Verifier is implemented by drivers that can read back what they wrote.
// Verify runs after the load, once. What it finds missing it looks for
// again, with backoff, until a deadline of its config, before it calls
// it lost. A check it could not answer is CheckUnverified with the
// reason; Verify returns an error only when it could not check at all.
type Verifier interface {
	Verify(ctx context.Context) ([]Check, error)
}

// Rater is implemented by drivers whose configuration implies a request
// rate (a remote-write load: series / scrape interval / batch; rule
// evaluation: rules / query interval). The caller may use it as the
// open-model rate when the plan sets none.
type Rater interface {
	RequestsPerSecond() float64
}

// Progress is told how far a phase has come: done of total units (objects,
// for S3). It is called from one goroutine at a time, a few times a second
// and once at the end. A nil Progress is allowed.
type Progress func(done, total int64)

// Preparer is implemented by drivers that set up data before the load, such
// as the objects an S3 GET test reads. Prepare runs once, before the first
// Do; an error means the load cannot run.
type Preparer interface {
	Prepare(ctx context.Context, progress Progress) error
}

// Cleaner is implemented by drivers that remove what they created. Cleanup
// runs once, after the last Do returned (and after Verify), even when the
// load failed; it removes exactly what the driver wrote and nothing else.
type Cleaner interface {
	Cleanup(ctx context.Context, progress Progress) error
}

// Sharder is implemented by drivers whose writes would collide if every
// worker of a distributed run made the same ones: Shard, called once
// before the first Do, makes the driver worker index's part of of (the
// remote_write driver writes its share of the targets, the s3 driver names
// its new objects after the worker, the otlp driver draws its own trace
// IDs). An error means the driver cannot be split so: the worker stops.
type Sharder interface {
	Shard(index, of int) error
}

// Handoff is implemented by drivers whose workers use what the
// coordinator's driver of a distributed run prepared, such as the s3
// driver's objects under a key prefix chosen when it was built: Handoff,
// after Prepare, says what the workers need to know; Adopt, called on each
// worker's driver before its load, takes it.
type Handoff interface {
	Handoff() map[string]string
	Adopt(map[string]string) error
}

// ShardVerifier is implemented by Verifiers whose read-back of a
// distributed run must see every worker's writes at once, because they
// land under one identity (the remote_write driver's job label) and a
// worker cannot count its own apart: each worker's driver gives what it had
// acknowledged (ReadBackState) and the coordinator's driver checks all of
// it together (VerifyShards), instead of each worker calling Verify.
type ShardVerifier interface {
	Verifier
	ReadBackState() ([]byte, error)
	VerifyShards(ctx context.Context, states [][]byte) ([]Check, error)
}

// Looper is implemented by drivers that can serve many closed-model VUs
// from one goroutine: an event loop over their connections, with no
// goroutine per VU waiting on its socket. The engine runs the closed model
// through loops when the driver gives it one.
type Looper interface {
	// Loop returns a loop serving the VUs with the given ids, or nil
	// when the driver's configuration is not served by loops (it then
	// runs a goroutine per VU calling Do).
	Loop(vus []int) (Loop, error)
}

// Loop serves a set of closed-model VUs, each starting its next operation
// as soon as its last one ended, as long as its LoopHost lets it.
type Loop interface {
	// Run serves the VUs until host is stopped and no operation is in
	// flight. A done ctx ends the operations in flight at once, as
	// stats.Interrupted, and Run returns.
	Run(ctx context.Context, host LoopHost)
	// Wake makes Run look at its host again: call it when what Begin
	// would say has changed.
	Wake()
	// Close releases the loop's connections once Run has returned.
	Close() error
}

// LoopHost is what a Loop asks of the engine. A Loop calls it from its
// own goroutine; each VU belongs to one Loop.
type LoopHost interface {
	// Begin tells whether VU vu is to start an operation now, and the
	// operation's start when it is.
	Begin(vu int) (start time.Time, ok bool)
	// Done records the operation VU vu started at start, ended at end.
	// r is the loop's own, reused after Done returns.
	Done(vu int, r *Result, start, end time.Time)
	// Stopped reports whether no operation is to start any more.
	Stopped() bool
	// Now reads the engine's clock.
	Now() time.Time
}

// Thinker is implemented by drivers whose VUs pause between operations,
// as a user reads an answer before the next turn of a conversation. Under
// the closed model the engine waits ThinkTime(vu) before VU vu's next
// operation, outside its timing; the open model's arrivals set the pace
// themselves. Only the goroutine VUs ask: a driver that thinks must not
// be a Looper (none is: the loops serve plain http://, which has no
// think time).
type Thinker interface {
	ThinkTime(vu int) time.Duration
}

// Timed is implemented by drivers that replay a timed trace: without a
// rate in the plan, the workload's open-model schedule is Arrivals, the
// offsets from its start at which each request is due (ascending), and
// the driver's n-th request is the trace's n-th.
type Timed interface {
	Arrivals() []time.Duration
}
