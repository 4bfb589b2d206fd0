package shard

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// WorkloadInterval is one closed interval of one workload, as a worker's
// engine handed it to its sink.
type WorkloadInterval struct {
	Workload string
	*stats.Interval
}

// The wire form of intervals: JSON, histograms as the compressed
// HdrHistogram V2 text stats encodes (the form the run store keeps), error
// classes, measures and counters by name, so a coordinator reads a newer
// or older worker's classes it knows and says which it does not.
type wireInterval struct {
	Workload string             `json:"workload"`
	Index    int                `json:"index"`
	StartNs  int64              `json:"start_ns"`
	EndNs    int64              `json:"end_ns"`
	Dropped  int64              `json:"dropped,omitempty"`
	VUs      int64              `json:"vus"`
	Lag      string             `json:"lag,omitempty"`
	Ops      map[string]*wireOp `json:"ops,omitempty"`
}

type wireOp struct {
	Latency   string            `json:"latency,omitempty"`
	Service   string            `json:"service,omitempty"`
	TTFB      string            `json:"ttfb,omitempty"`
	Connect   string            `json:"connect,omitempty"`
	Failed    string            `json:"failed,omitempty"` // failed operations' latency
	Classes   map[string]int64  `json:"classes"`
	Samples   map[string]string `json:"samples,omitempty"` // one message per failure class
	BytesSent int64             `json:"bytes_sent,omitempty"`
	BytesRecv int64             `json:"bytes_recv,omitempty"`
	Measures  map[string]string `json:"measures,omitempty"`
	Counters  map[string]int64  `json:"counters,omitempty"`
}

// EncodeIntervals is the wire form of ivs.
func EncodeIntervals(ivs []WorkloadInterval) ([]byte, error) {
	out := make([]wireInterval, 0, len(ivs))
	for _, iv := range ivs {
		w := wireInterval{Workload: iv.Workload, Index: iv.Index, StartNs: iv.Start.UnixNano(), EndNs: iv.End.UnixNano(),
			Dropped: iv.Dropped, VUs: iv.VUs}
		var err error
		if w.Lag, err = encodeHist(iv.Lag); err != nil {
			return nil, err
		}
		if len(iv.Ops) > 0 {
			w.Ops = make(map[string]*wireOp, len(iv.Ops))
		}
		for name, st := range iv.Ops {
			if w.Ops[name], err = encodeOp(st); err != nil {
				return nil, fmt.Errorf("cannot encode operation %q of workload %q: %w", name, iv.Workload, err)
			}
		}
		out = append(out, w)
	}
	return json.Marshal(out)
}

func encodeOp(st *stats.OpStats) (*wireOp, error) {
	op := &wireOp{Classes: map[string]int64{}, BytesSent: st.BytesSent, BytesRecv: st.BytesRecv}
	for _, h := range []struct {
		dst *string
		src *stats.Hist
	}{{&op.Latency, st.Latency}, {&op.Service, st.Service}, {&op.TTFB, st.TTFB}, {&op.Connect, st.Connect}, {&op.Failed, st.Failed}} {
		var err error
		if *h.dst, err = encodeHist(h.src); err != nil {
			return nil, err
		}
	}
	for c, n := range st.Classes {
		if n != 0 {
			op.Classes[stats.Class(c).String()] = n
		}
	}
	for c, msg := range st.Samples {
		if msg != "" {
			if op.Samples == nil {
				op.Samples = map[string]string{}
			}
			op.Samples[stats.Class(c).String()] = msg
		}
	}
	for m, h := range st.Measures {
		if h == nil || h.Count() == 0 {
			continue
		}
		if op.Measures == nil {
			op.Measures = map[string]string{}
		}
		var err error
		if op.Measures[stats.Measure(m).String()], err = encodeHist(h); err != nil {
			return nil, err
		}
	}
	for c, n := range st.Counters {
		if n != 0 {
			if op.Counters == nil {
				op.Counters = map[string]int64{}
			}
			op.Counters[stats.Counter(c).String()] = n
		}
	}
	return op, nil
}

func encodeHist(h *stats.Hist) (string, error) {
	if h == nil || h.Count() == 0 {
		return "", nil
	}
	b, err := h.Encode()
	return string(b), err
}

// DecodeIntervals reads the wire form back.
func DecodeIntervals(data []byte) ([]WorkloadInterval, error) {
	var in []wireInterval
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("cannot decode intervals: %w", err)
	}
	out := make([]WorkloadInterval, 0, len(in))
	for _, w := range in {
		iv := &stats.Interval{Index: w.Index, Start: time.Unix(0, w.StartNs), End: time.Unix(0, w.EndNs),
			Dropped: w.Dropped, VUs: w.VUs, Ops: make(map[string]*stats.OpStats, len(w.Ops))}
		var err error
		if iv.Lag, err = decodeHist(w.Lag, stats.EmptyHist()); err != nil {
			return nil, err
		}
		for name, op := range w.Ops {
			if iv.Ops[name], err = decodeOp(op); err != nil {
				return nil, fmt.Errorf("cannot decode operation %q of workload %q: %w", name, w.Workload, err)
			}
		}
		out = append(out, WorkloadInterval{Workload: w.Workload, Interval: iv})
	}
	return out, nil
}

func decodeOp(op *wireOp) (*stats.OpStats, error) {
	st := &stats.OpStats{Latency: stats.EmptyHist(), Service: stats.EmptyHist(), TTFB: stats.EmptyHist(), Connect: stats.EmptyHist()}
	st.BytesSent, st.BytesRecv = op.BytesSent, op.BytesRecv
	for _, h := range []struct {
		src string
		dst **stats.Hist
	}{{op.Latency, &st.Latency}, {op.Service, &st.Service}, {op.TTFB, &st.TTFB}, {op.Connect, &st.Connect}, {op.Failed, &st.Failed}} {
		var err error
		if *h.dst, err = decodeHist(h.src, *h.dst); err != nil {
			return nil, err
		}
	}
	for name, n := range op.Classes {
		c, err := stats.ParseClass(name)
		if err != nil {
			return nil, err
		}
		st.Classes[c] = n
	}
	for name, msg := range op.Samples {
		c, err := stats.ParseClass(name)
		if err != nil {
			return nil, err
		}
		st.Samples[c] = msg
	}
	for name, text := range op.Measures {
		m, err := stats.ParseMeasure(name)
		if err != nil {
			return nil, err
		}
		if st.Measures[m], err = decodeHist(text, stats.EmptyHist()); err != nil {
			return nil, err
		}
	}
	for name, n := range op.Counters {
		c, err := stats.ParseCounter(name)
		if err != nil {
			return nil, err
		}
		st.Counters[c] = n
	}
	return st, nil
}

// decodeHist decodes text (packed, see stats.DecodeHist), or returns empty
// (a fresh histogram) for "".
func decodeHist(text string, empty *stats.Hist) (*stats.Hist, error) {
	if text == "" {
		return empty, nil
	}
	return stats.DecodeHist([]byte(text))
}
