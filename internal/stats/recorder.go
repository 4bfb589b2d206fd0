package stats

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Sample is one completed operation as the engine hands it to the recorder.
// Nothing of it is kept after Record returns.
type Sample struct {
	Op        string
	Intended  time.Time     // when the schedule wanted it to start; equals Start in the closed model
	Start     time.Time     // when the driver was called
	End       time.Time     // when the driver returned
	TTFB      time.Duration // from Start to the first response byte; 0 when the driver has none
	Connect   time.Duration // time to open a new connection; 0 when one was reused
	BytesSent int64
	BytesRecv int64
	Class     Class
	Message   string // the error, when Class is not OK
	// Measures are the driver's other timings of the operation (time to
	// first token, each inter-token gap, …); read during Record only, so
	// the caller may reuse the slice.
	Measures []Timing
	Counters [NumCounters]int64 // e.g. the operation's output tokens
}

// OpStats accumulates one operation's figures over an interval or a window.
//
// Latency, Service and TTFB are of successful operations (class OK) only,
// like k6's http_req_duration{expected_response:true}: a refused
// connection answered in 50 µs must not pull the median down, nor a flood
// of instant 500s hide the tail of the answers that worked. Failed
// operations' latency goes into Failed, which exists only once something
// failed, so an operation that never fails costs nothing more. Every
// operation's latency is AllLatency: the two merged exactly.
type OpStats struct {
	Latency *Hist // successful operations, intended start → end: what a user of the system waited
	Service *Hist // successful operations, actual start → end: the uncorrected service time
	TTFB    *Hist // successful operations, actual start → first response byte
	Connect *Hist // new connections only, whatever the outcome: dial (+ TLS handshake)
	// Failed is the latency (intended start → end) of failed operations,
	// every class but OK; nil until one is recorded or merged.
	Failed *Hist
	// Mixed says Latency, Service and TTFB hold failed operations too, and
	// Failed is empty: figures read from a store written before results
	// format 3, which did not keep them apart. It is set only where
	// something failed, since otherwise the figures are the same.
	Mixed     bool
	Classes   Counts
	BytesSent int64
	BytesRecv int64
	Samples   [NumClasses]string // one message per failure class, the first seen
	// Measures holds a histogram per measure, nil until a value of it is
	// recorded or merged: only drivers that measure it pay for it.
	Measures [NumMeasures]*Hist
	Counters [NumCounters]int64
}

// NewOpStats returns empty figures.
func NewOpStats() *OpStats {
	return &OpStats{Latency: NewHist(), Service: NewHist(), TTFB: NewHist(), Connect: NewHist()}
}

func (s *OpStats) record(x *Sample) {
	if x.Class == OK {
		s.Latency.Record(x.End.Sub(x.Intended))
		s.Service.Record(x.End.Sub(x.Start))
		if x.TTFB > 0 {
			s.TTFB.Record(x.TTFB)
		}
	} else {
		s.failed().Record(x.End.Sub(x.Intended))
		if s.Samples[x.Class] == "" {
			s.Samples[x.Class] = x.Message
		}
	}
	if x.Connect > 0 {
		s.Connect.Record(x.Connect)
	}
	s.Classes[x.Class]++
	s.BytesSent += x.BytesSent
	s.BytesRecv += x.BytesRecv
	for _, t := range x.Measures {
		s.measure(t.Measure).Record(t.D)
	}
	for c, n := range x.Counters {
		s.Counters[c] += n
	}
}

// failed is the failed operations' histogram, made on first use.
func (s *OpStats) failed() *Hist {
	if s.Failed == nil {
		s.Failed = NewHist()
	}
	return s.Failed
}

// HasFailed reports whether Failed holds any latency.
func (s *OpStats) HasFailed() bool { return s.Failed != nil && s.Failed.Count() > 0 }

// AllLatency is the latency of every operation, failed ones too: Latency
// and Failed merged exactly. When nothing failed it is Latency itself,
// which the caller must not modify.
func (s *OpStats) AllLatency() *Hist {
	if !s.HasFailed() {
		return s.Latency
	}
	h := NewHist()
	h.Merge(s.Latency)
	h.Merge(s.Failed)
	return h
}

// measure is m's histogram, made on first use.
func (s *OpStats) measure(m Measure) *Hist {
	h := s.Measures[m]
	if h == nil {
		h = NewHist()
		s.Measures[m] = h
	}
	return h
}

// Merge adds o into s exactly.
func (s *OpStats) Merge(o *OpStats) {
	s.Latency.Merge(o.Latency)
	s.Service.Merge(o.Service)
	s.TTFB.Merge(o.TTFB)
	s.Connect.Merge(o.Connect)
	if o.HasFailed() {
		s.failed().Merge(o.Failed)
	}
	s.Mixed = s.Mixed || o.Mixed
	s.Classes.Add(&o.Classes)
	s.BytesSent += o.BytesSent
	s.BytesRecv += o.BytesRecv
	for i, m := range o.Samples {
		if s.Samples[i] == "" {
			s.Samples[i] = m
		}
	}
	for m, h := range o.Measures {
		if h != nil && h.Count() > 0 {
			s.measure(Measure(m)).Merge(h)
		}
	}
	for c, n := range o.Counters {
		s.Counters[c] += n
	}
}

// Pack packs every histogram of s (see Hist.Pack).
func (s *OpStats) Pack() {
	for _, h := range []*Hist{s.Latency, s.Service, s.TTFB, s.Connect, s.Failed} {
		if h != nil {
			h.Pack()
		}
	}
	for _, h := range s.Measures {
		if h != nil {
			h.Pack()
		}
	}
}

// reset empties s for reuse, keeping its histograms.
func (s *OpStats) reset() {
	s.Latency.Reset()
	s.Service.Reset()
	s.TTFB.Reset()
	s.Connect.Reset()
	if s.Failed != nil {
		s.Failed.Reset()
	}
	for _, h := range s.Measures {
		if h != nil {
			h.Reset()
		}
	}
	*s = OpStats{Latency: s.Latency, Service: s.Service, TTFB: s.TTFB, Connect: s.Connect, Failed: s.Failed, Measures: s.Measures}
}

// Interval is what one workload measured during one interval (1 s by default).
type Interval struct {
	Index   int
	Start   time.Time
	End     time.Time
	Ops     map[string]*OpStats
	Dropped int64 // arrivals that found no free VU at the cap
	VUs     int64 // VUs alive at the end of the interval
	Lag     *Hist // scheduler lag: dispatch time − intended start
}

// OpNames lists the operations in i in sorted order.
func (i *Interval) OpNames() []string {
	names := make([]string, 0, len(i.Ops))
	for n := range i.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Recorder collects samples from many goroutines into intervals. Writers pick
// a shard (a VU uses its id), so they rarely contend; Flush merges every
// shard into one Interval and empties it, holding the shard's lock for that
// shard only. Memory is bounded by the number of operation names, never by
// the number of samples: one set of histograms per operation per shard,
// while the operation is recorded in every interval. (A second set to swap
// in, so that a shard never waited for its merge, held as much again: 8 MiB
// of a generator's 12 MiB live heap driving two LLM workloads, whose
// seconds-long latencies widen every histogram.)
type Recorder struct {
	shards  []shard
	dropped atomic.Int64
	vus     atomic.Int64
	lagMu   sync.Mutex
	lag     *Hist
	start   time.Time
	index   int
}

type shard struct {
	mu  sync.Mutex
	cur map[string]*OpStats
	_   [48]byte // keep shards on separate cache lines
}

// NewRecorder returns a recorder with n shards whose first interval starts at start.
func NewRecorder(n int, start time.Time) *Recorder {
	r := &Recorder{shards: make([]shard, max(n, 1)), lag: NewHist(), start: start}
	for i := range r.shards {
		r.shards[i].cur = map[string]*OpStats{}
	}
	return r
}

// Record adds one sample. It is safe for concurrent use.
func (r *Recorder) Record(shardHint int, x *Sample) {
	s := &r.shards[uint(shardHint)%uint(len(r.shards))]
	s.mu.Lock()
	st := s.cur[x.Op]
	if st == nil {
		st = NewOpStats()
		s.cur[x.Op] = st
	}
	st.record(x)
	s.mu.Unlock()
}

// AddDropped counts arrivals that could not be served.
func (r *Recorder) AddDropped(n int64) { r.dropped.Add(n) }

// RecordLag records how late the scheduler dispatched one arrival.
func (r *Recorder) RecordLag(d time.Duration) {
	r.lagMu.Lock()
	r.lag.Record(d)
	r.lagMu.Unlock()
}

// SetVUs records the number of live VUs.
func (r *Recorder) SetVUs(n int64) { r.vus.Store(n) }

// Pending reports whether anything was recorded since the last Flush: an
// operation, or a dropped arrival.
func (r *Recorder) Pending() bool {
	if r.dropped.Load() != 0 {
		return true
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n := 0
		for _, st := range s.cur {
			n += int(st.Classes.Total())
		}
		s.mu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// Flush closes the current interval at end and returns it. Samples recorded
// concurrently with Flush land in this interval or the next, never in both.
func (r *Recorder) Flush(end time.Time) *Interval {
	iv := &Interval{Index: r.index, Start: r.start, End: end, Ops: map[string]*OpStats{}}
	r.index++
	r.start = end
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for name, st := range s.cur {
			if st.Classes.Total() == 0 {
				// Idle for a whole interval (an alert rule's query
				// every 15 s): its histograms go, and come back with
				// its next sample, rather than stay for the run.
				delete(s.cur, name)
				continue
			}
			dst := iv.Ops[name]
			if dst == nil {
				dst = NewOpStats()
				iv.Ops[name] = dst
			}
			dst.Merge(st)
			st.reset()
		}
		s.mu.Unlock()
	}
	iv.Dropped = r.dropped.Swap(0)
	iv.VUs = r.vus.Load()
	r.lagMu.Lock()
	iv.Lag, r.lag = r.lag, NewHist()
	r.lagMu.Unlock()
	return iv
}
