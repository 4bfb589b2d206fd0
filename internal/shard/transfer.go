package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// End is what a worker writes when its part of a phase is over, after its
// last part.
type End struct {
	Worker int    `json:"worker"`
	Parts  int    `json:"parts"`           // parts written before this end
	Error  string `json:"error,omitempty"` // why the shard failed; "" when it did not
	// Detail is what the worker reports of its workloads besides their
	// intervals (engine summaries, driver facts and checks, its own CPU),
	// in the form the command that runs workers defines.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Uploader is a worker's sink for one phase: it keeps the intervals its
// engine closes and writes them to the store as numbered parts, so the
// coordinator can merge them while the phase runs.
type Uploader struct {
	run           Run
	phase, worker int
	mu            sync.Mutex
	buf           []WorkloadInterval
	seq           int // the next part's number
}

// NewUploader returns the sink of worker's intervals of phase.
func NewUploader(r Run, phase, worker int) *Uploader {
	return &Uploader{run: r, phase: phase, worker: worker}
}

// Interval keeps one closed interval; it is the engine's Sink method.
func (u *Uploader) Interval(workload string, iv *stats.Interval) {
	u.mu.Lock()
	u.buf = append(u.buf, WorkloadInterval{Workload: workload, Interval: iv})
	u.mu.Unlock()
}

// Flush writes what is kept as the next part. Nothing kept, nothing written.
func (u *Uploader) Flush(ctx context.Context) error {
	u.mu.Lock()
	buf := u.buf
	u.buf = nil
	u.mu.Unlock()
	if len(buf) == 0 {
		return nil
	}
	data, err := EncodeIntervals(buf)
	if err == nil {
		err = u.run.Store.Put(ctx, u.run.partKey(u.phase, u.worker, u.seq), data)
	}
	if err != nil {
		u.mu.Lock()
		u.buf = append(buf, u.buf...) // kept for the next attempt
		u.mu.Unlock()
		return fmt.Errorf("cannot write worker %d's intervals of phase %d: %w", u.worker, u.phase, err)
	}
	u.seq++
	return nil
}

// Every flushes every period until ctx ends; it returns the first error,
// after which the worker should stop its load (its figures would be lost).
func (u *Uploader) Every(ctx context.Context, period time.Duration) error {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := u.Flush(ctx); err != nil {
				return err
			}
		}
	}
}

// Finish writes what is left and then the shard's end.
func (u *Uploader) Finish(ctx context.Context, e End) error {
	if err := u.Flush(ctx); err != nil {
		return err
	}
	e.Worker, e.Parts = u.worker, u.seq
	return putJSON(ctx, u.run.Store, u.run.endKey(u.phase, u.worker), e)
}

// Follower reads, for the coordinator, what the workers of one phase have
// written since it last looked.
type Follower struct {
	run   Run
	phase int
	next  []int  // per worker: the next part to read
	ends  []*End // per worker: its end, once read after all its parts
}

// NewFollower follows the n workers of phase.
func NewFollower(r Run, phase, n int) *Follower {
	return &Follower{run: r, phase: phase, next: make([]int, n), ends: make([]*End, n)}
}

// Poll reads every new part, in order, of every worker, and the ends of
// workers all of whose parts have been read. It returns the new intervals
// by worker and the workers that ended in this poll.
func (f *Follower) Poll(ctx context.Context) (map[int][]WorkloadInterval, []int, error) {
	keys, err := f.run.Store.List(ctx, fmt.Sprintf("%s/phases/%d/", f.run.ID, f.phase))
	if err != nil {
		return nil, nil, err
	}
	has := map[string]bool{}
	for _, k := range keys {
		has[k] = true
	}
	got := map[int][]WorkloadInterval{}
	var ended []int
	for w := range f.next {
		if f.ends[w] != nil {
			continue
		}
		for has[f.run.partKey(f.phase, w, f.next[w])] {
			data, err := f.run.Store.Get(ctx, f.run.partKey(f.phase, w, f.next[w]))
			if err != nil {
				return got, ended, err
			}
			ivs, err := DecodeIntervals(data)
			if err != nil {
				return got, ended, fmt.Errorf("worker %d, part %d: %w", w, f.next[w], err)
			}
			got[w] = append(got[w], ivs...)
			f.next[w]++
		}
		if !has[f.run.endKey(f.phase, w)] {
			continue
		}
		var e End
		if _, err := getJSON(ctx, f.run.Store, f.run.endKey(f.phase, w), &e); err != nil {
			return got, ended, err
		}
		if e.Parts <= f.next[w] { // every part it wrote is read
			f.ends[w] = &e
			ended = append(ended, w)
		}
	}
	return got, ended, nil
}

// Ends is every worker's end, nil for those not ended yet.
func (f *Follower) Ends() []*End { return f.ends }

// Parts is how many parts each worker has delivered, for progress and for
// naming a worker that stopped delivering.
func (f *Follower) Parts() []int { return append([]int(nil), f.next...) }
