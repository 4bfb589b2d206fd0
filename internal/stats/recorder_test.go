package stats

import (
	"fmt"
	"testing"
	"time"
)

// TestRecorderKeepsBytesAndTimingsOfWhatHappened (issue 18): bytes sent
// add up (a report's "MiB/s sent"), a driver that measures no time to
// first byte leaves the TTFB histogram empty (no quantiles of 1 µs), and
// only new connections are timed.
func TestRecorderKeepsBytesAndTimingsOfWhatHappened(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(2, start)
	for i := range 10 {
		s := &Sample{Op: "put", Intended: start, Start: start, End: start.Add(3 * time.Millisecond),
			BytesSent: 1 << 20, BytesRecv: 100}
		if i < 3 { // three new connections, seven reused
			s.Connect = 200 * time.Microsecond
		}
		r.Record(i, s)
	}
	st := r.Flush(start.Add(time.Second)).Ops["put"]
	if st.BytesSent != 10<<20 || st.BytesRecv != 1000 {
		t.Errorf("bytes sent %d, received %d; want %d and 1000", st.BytesSent, st.BytesRecv, 10<<20)
	}
	if n := st.TTFB.Count(); n != 0 {
		t.Errorf("TTFB has %d values (p50 %v) for a driver that measures none", n, st.TTFB.Quantile(0.5))
	}
	if n, p50 := st.Connect.Count(), st.Connect.Quantile(0.5); n != 3 || p50 != 200*time.Microsecond {
		t.Errorf("connect: %d values, p50 %v; want the 3 new connections at 200µs", n, p50)
	}
}

// TestIntervalsAfterAFailureCarryNothingOver: the recorder reuses a
// shard's figures two flushes later; an interval in which nothing failed
// and nothing streamed then has neither a failed-latency histogram nor
// histograms of measures, whatever an earlier interval had.
func TestIntervalsAfterAFailureCarryNothingOver(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(1, start)
	r.Record(0, &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Millisecond),
		Class: Status5xx, Message: "500"})
	r.Record(0, &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Millisecond),
		Measures: []Timing{{TTFT, time.Millisecond}}})
	first := r.Flush(start.Add(time.Second)).Ops["chat"]
	if !first.HasFailed() || first.Measures[TTFT].Count() != 1 {
		t.Fatalf("first interval: failed %v, TTFT %v", first.Failed, first.Measures[TTFT])
	}
	r.Flush(start.Add(2 * time.Second)) // empty: the shard's buffers swap back
	r.Record(0, &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Millisecond)})
	third := r.Flush(start.Add(3 * time.Second)).Ops["chat"]
	if third.Classes.Total() != 1 || third.Failed != nil || third.HasFailed() {
		t.Errorf("third interval: %d operations, failed histogram %v", third.Classes.Total(), third.Failed)
	}
	if third.Measures != [NumMeasures]*Hist{} {
		t.Errorf("third interval has measure histograms %v", third.Measures)
	}
}

// TestMeasureNotTakenInAnIntervalHasNoHistogram: an operation that
// streamed in one interval and not in the next, recorded without a pause,
// has no histograms of measures in the next (nil, costing nothing).
func TestMeasureNotTakenInAnIntervalHasNoHistogram(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(1, start)
	r.Record(0, &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Millisecond),
		Measures: []Timing{{TTFT, time.Millisecond}}})
	if first := r.Flush(start.Add(time.Second)).Ops["chat"]; first.Measures[TTFT].Count() != 1 {
		t.Fatalf("first interval: TTFT %v", first.Measures[TTFT])
	}
	r.Record(0, &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Millisecond)})
	second := r.Flush(start.Add(2 * time.Second)).Ops["chat"]
	if second.Classes.Total() != 1 || second.Measures != [NumMeasures]*Hist{} {
		t.Errorf("second interval: %d operations, measure histograms %v", second.Classes.Total(), second.Measures)
	}
}

func TestRecorderShards(t *testing.T) {
	for _, c := range []struct{ n, want int }{{-1, 1}, {0, 1}, {1, 1}, {4, 4}} {
		if got := len(NewRecorder(c.n, time.Unix(0, 0)).shards); got != c.want {
			t.Errorf("NewRecorder(%d) has %d shards, want %d", c.n, got, c.want)
		}
	}
}

func TestPendingSeesOperationsAndDroppedArrivals(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(3, start)
	if r.Pending() {
		t.Error("a new recorder has something pending")
	}
	r.Record(2, &Sample{Op: "get", Intended: start, Start: start, End: start.Add(time.Millisecond)})
	if !r.Pending() {
		t.Error("a recorded operation is not pending")
	}
	r.Flush(start.Add(time.Second))
	if r.Pending() {
		t.Error("something is pending after Flush")
	}
	r.AddDropped(1)
	if !r.Pending() {
		t.Error("a dropped arrival is not pending")
	}
}

func TestHistMeanAndDistribution(t *testing.T) {
	h := NewHist()
	if h.Mean() != 0 || h.Distribution() != nil {
		t.Errorf("empty: mean %v, distribution %v", h.Mean(), h.Distribution())
	}
	for _, d := range []time.Duration{time.Millisecond, time.Millisecond, 1600 * time.Microsecond} {
		h.Record(d)
	}
	if h.Mean() != 1200*time.Microsecond {
		t.Errorf("mean %v, want 1.2ms", h.Mean())
	}
	want := []Bucket{{time.Millisecond, 2}, {1600 * time.Microsecond, 1}}
	got := h.Distribution()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("distribution %v, want %v", got, want)
	}
}

// TestMergeIntoADecodedHistogramWidensIt: a histogram read back from the
// store covers only up to its maximum; merging a longer latency into it
// keeps that latency (the merged maximum and count).
func TestMergeIntoADecodedHistogramWidensIt(t *testing.T) {
	h := NewHist()
	h.Record(time.Millisecond)
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeHist(b)
	if err != nil {
		t.Fatal(err)
	}
	long := NewHist()
	long.Record(30 * time.Minute)
	d.Merge(long)
	if d.Count() != 2 || d.Max() < 29*time.Minute {
		t.Errorf("after the merge: count %d, max %v; want 2 and 30m", d.Count(), d.Max())
	}
}

func TestNamesOfUnknownValues(t *testing.T) {
	for got, want := range map[string]string{
		NumClasses.String():  fmt.Sprintf("class(%d)", NumClasses),
		NumMeasures.String(): fmt.Sprintf("measure(%d)", NumMeasures),
		NumCounters.String(): fmt.Sprintf("counter(%d)", NumCounters),
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// TestLengthsReadBackInTokens (issue 18): a prompt or output length goes
// into a histogram as a timing and comes out of its quantiles and maximum
// as the same number of tokens, as the report's "output length p50" reads it.
func TestLengthsReadBackInTokens(t *testing.T) {
	h := NewHist()
	for _, n := range []int64{120, 250, 250, 900} {
		h.Record(LengthTiming(OutputLength, n).D)
	}
	if p50, top := Tokens(h.Quantile(0.5)), Tokens(h.Max()); p50 != 250 || top != 900 {
		t.Errorf("p50 %d tokens, max %d; want 250 and 900", p50, top)
	}
	if !OutputLength.IsLength() || !PromptLength.IsLength() || TTFT.IsLength() {
		t.Error("IsLength: want the two lengths and no duration")
	}
}
