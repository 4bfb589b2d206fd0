package stats

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestShardMergeIsExact proves that merging the histograms of N shards gives
// exactly the percentiles of recording everything into one.
func TestShardMergeIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const shards = 7
	one := NewHist()
	parts := make([]*Hist, shards)
	for i := range parts {
		parts[i] = NewHist()
	}
	for i := 0; i < 200_000; i++ {
		// A long-tailed mix: 20 ms ± noise, with rare stalls up to 2 s.
		d := time.Duration(rng.NormFloat64()*2e6 + 20e6)
		if rng.IntN(100) == 0 {
			d = time.Duration(rng.Int64N(int64(2 * time.Second)))
		}
		one.Record(d)
		parts[rng.IntN(shards)].Record(d)
	}
	merged := NewHist()
	for _, p := range parts {
		merged.Merge(p)
	}
	if !merged.Equal(one) {
		t.Fatal("merged shards differ from one histogram")
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
		if a, b := merged.Quantile(q), one.Quantile(q); a != b {
			t.Errorf("q%v: merged %v, single %v", q, a, b)
		}
	}
	if merged.Count() != 200_000 {
		t.Errorf("Count() = %d", merged.Count())
	}
}

// TestShardMergeOfMeasuresIsExact proves the same for the measures and
// counters drivers add: streams recorded into the OpStats of N shards and
// merged equal the same streams recorded into one, measure by measure, and
// a shard that never saw a measure has no histogram of it.
func TestShardMergeOfMeasuresIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const shards = 5
	one := NewOpStats()
	parts := make([]*OpStats, shards)
	for i := range parts {
		parts[i] = NewOpStats()
	}
	start := time.Unix(1000, 0)
	var buf []Timing
	for i := 0; i < 20_000; i++ {
		// A stream: TTFT about 50 ms, 1 to 40 tokens about 10 ms apart with
		// rare stalls, TPOT over the gaps.
		ttft := time.Duration(rng.NormFloat64()*5e6 + 50e6)
		buf = append(buf[:0], Timing{TTFT, ttft})
		tokens := 1 + rng.IntN(40)
		var decode time.Duration
		for range tokens - 1 {
			g := time.Duration(rng.NormFloat64()*1e6 + 10e6)
			if rng.IntN(500) == 0 {
				g = time.Duration(rng.Int64N(int64(time.Second)))
			}
			if decode == 0 {
				buf = append(buf, Timing{TTST, g})
			}
			decode += g
			buf = append(buf, Timing{ITL, g})
		}
		if tokens > 1 {
			buf = append(buf, Timing{TPOT, decode / time.Duration(tokens-1)})
		}
		buf = append(buf, LengthTiming(PromptLength, 7), LengthTiming(OutputLength, int64(tokens)), Timing{NTPOT, (ttft + decode) / time.Duration(tokens)})
		s := &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(ttft + decode), Class: OK,
			Measures: buf, Counters: [NumCounters]int64{PromptTokens: 7, OutputTokens: int64(tokens)}}
		one.record(s)
		// only the first shards see anything, so the last has no histograms
		parts[rng.IntN(shards-1)].record(s)
	}
	if last := parts[shards-1]; last.Measures != [NumMeasures]*Hist{} {
		t.Error("a shard that recorded no measure has histograms of them")
	}
	merged := NewOpStats()
	for _, p := range parts {
		merged.Merge(p)
	}
	if merged.Counters != one.Counters || merged.Counters[PromptTokens] != 7*20_000 {
		t.Errorf("counters %v, want %v", merged.Counters, one.Counters)
	}
	for m := Measure(0); m < NumMeasures; m++ {
		a, b := merged.Measures[m], one.Measures[m]
		if a == nil || b == nil || a.Count() == 0 {
			t.Fatalf("%v: no histogram (merged %v, single %v)", m, a, b)
		}
		if !a.Equal(b) {
			t.Errorf("%v: merged shards differ from one histogram", m)
		}
		for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
			if x, y := a.Quantile(q), b.Quantile(q); x != y {
				t.Errorf("%v q%v: merged %v, single %v", m, q, x, y)
			}
		}
	}
	if n := one.Measures[TTFT].Count(); n != 20_000 {
		t.Errorf("TTFT count %d, want one per stream", n)
	}
	if gaps := one.Measures[ITL].Count(); gaps != one.Counters[OutputTokens]-20_000 {
		t.Errorf("ITL count %d, want one per gap: %d", gaps, one.Counters[OutputTokens]-20_000)
	}
}

func TestMeasureAndCounterNames(t *testing.T) {
	for m := Measure(0); m < NumMeasures; m++ {
		if back, err := ParseMeasure(m.String()); err != nil || back != m {
			t.Errorf("ParseMeasure(%q) = %v, %v", m.String(), back, err)
		}
	}
	for c := Counter(0); c < NumCounters; c++ {
		if back, err := ParseCounter(c.String()); err != nil || back != c {
			t.Errorf("ParseCounter(%q) = %v, %v", c.String(), back, err)
		}
	}
	if _, err := ParseMeasure("ttfb"); err == nil {
		t.Error("ParseMeasure accepted an unknown measure")
	}
	if _, err := ParseCounter("bytes"); err == nil {
		t.Error("ParseCounter accepted an unknown counter")
	}
}

func TestHistPrecisionAndClamping(t *testing.T) {
	h := NewHist()
	for _, d := range []time.Duration{20 * time.Millisecond, 0, 2 * time.Hour} {
		h.Record(d)
	}
	if got := h.Quantile(0.5); got < 19980*time.Microsecond || got > 20020*time.Microsecond {
		t.Errorf("median %v, want 20ms within 0.1%%", got)
	}
	if h.Min() != time.Microsecond || h.Max() < 59*time.Minute || h.Max() > 61*time.Minute {
		t.Errorf("min %v max %v: values outside the range must be clamped, not lost", h.Min(), h.Max())
	}
	if h.Count() != 3 {
		t.Errorf("Count() = %d, want 3", h.Count())
	}
}

func TestHistEncodeRoundTrip(t *testing.T) {
	h := NewHist()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * 37 * time.Microsecond)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHist(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) || back.Quantile(0.99) != h.Quantile(0.99) {
		t.Error("decoded histogram differs")
	}
	if _, err := DecodeHist([]byte("not a histogram")); err == nil {
		t.Error("DecodeHist accepted garbage")
	}
}

func TestRecorderIntervalsMergeToTheWhole(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(4, start)
	whole := NewOpStats()
	var ivs []*Interval
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				s := &Sample{Op: "get", Intended: start, Start: start.Add(time.Duration(i) * time.Microsecond),
					End: start.Add(time.Duration(i*w+50) * time.Microsecond), BytesRecv: 10, Class: Class(i % 3)}
				if s.Class != OK {
					s.Message = "boom"
				} else if w%2 == 0 { // half the writers stream
					s.Measures = []Timing{{TTFT, time.Duration(i) * time.Microsecond}, {ITL, time.Duration(w) * time.Millisecond}}
					s.Counters[OutputTokens] = 2
				}
				r.Record(w, s)
				mu.Lock()
				whole.record(s)
				mu.Unlock()
			}
		}(w)
	}
	// Flush concurrently with the writers: nothing may be lost or doubled.
	for i := 1; i <= 20; i++ {
		ivs = append(ivs, r.Flush(start.Add(time.Duration(i)*time.Millisecond)))
	}
	wg.Wait()
	ivs = append(ivs, r.Flush(start.Add(time.Second)))
	merged := NewOpStats()
	for i, iv := range ivs {
		if iv.Index != i {
			t.Fatalf("interval %d has index %d", i, iv.Index)
		}
		if st := iv.Ops["get"]; st != nil {
			merged.Merge(st)
		}
	}
	if merged.Classes != whole.Classes || merged.BytesRecv != whole.BytesRecv {
		t.Errorf("counts %v/%d, want %v/%d", merged.Classes, merged.BytesRecv, whole.Classes, whole.BytesRecv)
	}
	if !merged.Latency.Equal(whole.Latency) || !merged.Service.Equal(whole.Service) {
		t.Error("merged interval histograms differ from the whole")
	}
	if !merged.HasFailed() || !merged.Failed.Equal(whole.Failed) {
		t.Error("merged failed-latency histograms differ from the whole")
	}
	if merged.Latency.Count() != merged.Classes[OK] || merged.Failed.Count() != merged.Classes.Errors() {
		t.Errorf("%d successful and %d failed latencies, want %d and %d",
			merged.Latency.Count(), merged.Failed.Count(), merged.Classes[OK], merged.Classes.Errors())
	}
	if all := merged.AllLatency(); all.Count() != merged.Classes.Total() || !all.Equal(whole.AllLatency()) {
		t.Errorf("all-requests latency: %d values, want %d, equal to the whole's", all.Count(), merged.Classes.Total())
	}
	if merged.Counters != whole.Counters || whole.Counters[OutputTokens] == 0 {
		t.Errorf("counters %v, want %v", merged.Counters, whole.Counters)
	}
	for _, m := range []Measure{TTFT, ITL} {
		if merged.Measures[m] == nil || !merged.Measures[m].Equal(whole.Measures[m]) {
			t.Errorf("merged %v histograms differ from the whole", m)
		}
	}
	if merged.Measures[TPOT] != nil {
		t.Error("a measure no sample had has a histogram")
	}
	if merged.Samples[Timeout] != "boom" || merged.Samples[OK] != "" {
		t.Errorf("samples %q", merged.Samples)
	}
}

// TestFailedLatencyIsKeptApart: fast failures (refused connections, instant
// 500s) go into Failed, not into the successful operations' latency,
// service time or TTFB; the all-requests latency is both merged; and an
// operation that never failed has no Failed histogram, in any interval.
func TestFailedLatencyIsKeptApart(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(2, start)
	for i := range 10 {
		s := &Sample{Op: "get", Intended: start, Start: start, End: start.Add(20 * time.Millisecond), TTFB: 19 * time.Millisecond}
		if i%5 < 3 { // 60 % refused at once
			s.End, s.TTFB, s.Class, s.Message = start.Add(50*time.Microsecond), 0, Connect, "connection refused"
		}
		r.Record(i, s)
		r.Record(i, &Sample{Op: "ok", Intended: start, Start: start, End: start.Add(time.Millisecond)})
	}
	iv := r.Flush(start.Add(time.Second))
	st := iv.Ops["get"]
	if st.Latency.Count() != 4 || st.Service.Count() != 4 || st.TTFB.Count() != 4 || st.Failed.Count() != 6 {
		t.Fatalf("latency %d, service %d, TTFB %d, failed %d values; want 4, 4, 4 and 6",
			st.Latency.Count(), st.Service.Count(), st.TTFB.Count(), st.Failed.Count())
	}
	if p50 := st.Latency.Quantile(0.5); p50 < 19980*time.Microsecond {
		t.Errorf("successful p50 %v, want 20ms: failures pulled it down", p50)
	}
	all := st.AllLatency()
	if all.Count() != 10 || all.Quantile(0.5) > 100*time.Microsecond || all.Max() < 19980*time.Microsecond {
		t.Errorf("all requests: %d values, p50 %v, max %v; want 10, the refusals' 50µs and 20ms", all.Count(), all.Quantile(0.5), all.Max())
	}
	if ok := iv.Ops["ok"]; ok.Failed != nil || ok.HasFailed() || ok.AllLatency() != ok.Latency {
		t.Error("an operation that never failed has a failed-latency histogram")
	}
	r.Record(0, &Sample{Op: "get", Intended: start, Start: start, End: start.Add(time.Millisecond)})
	if next := r.Flush(start.Add(2 * time.Second)).Ops["get"]; next.Failed != nil {
		t.Error("an interval without failures carries a failed-latency histogram over")
	}
}

func TestRecorderCountsDroppedAndLagPerInterval(t *testing.T) {
	r := NewRecorder(1, time.Unix(0, 0))
	r.AddDropped(3)
	r.RecordLag(5 * time.Millisecond)
	r.SetVUs(7)
	a := r.Flush(time.Unix(1, 0))
	b := r.Flush(time.Unix(2, 0))
	if a.Dropped != 3 || a.Lag.Count() != 1 || a.VUs != 7 {
		t.Errorf("first interval: dropped %d, lag count %d, VUs %d", a.Dropped, a.Lag.Count(), a.VUs)
	}
	if b.Dropped != 0 || b.Lag.Count() != 0 || len(b.Ops) != 0 {
		t.Errorf("second interval carried over: dropped %d, lag count %d", b.Dropped, b.Lag.Count())
	}
}

func TestClassNames(t *testing.T) {
	for c := OK; c < NumClasses; c++ {
		back, err := ParseClass(c.String())
		if err != nil || back != c {
			t.Errorf("ParseClass(%q) = %v, %v", c.String(), back, err)
		}
	}
	if _, err := ParseClass("nope"); err == nil {
		t.Error("ParseClass accepted an unknown class")
	}
	c := Counts{OK: 5, Timeout: 2, Status5xx: 1}
	if c.Errors() != 3 || c.Total() != 8 {
		t.Errorf("Errors() = %d, Total() = %d", c.Errors(), c.Total())
	}
}

// BenchmarkRecordStream is the cost of recording one stream of 100 tokens:
// its TTFT, 99 inter-token gaps, its TPOT and its token counts.
func BenchmarkRecordStream(b *testing.B) {
	start := time.Now()
	r := NewRecorder(8, start)
	ms := []Timing{{TTFT, 50 * time.Millisecond}, {TPOT, 10 * time.Millisecond}}
	for i := range 99 {
		ms = append(ms, Timing{ITL, time.Duration(9900+i*2) * time.Microsecond})
	}
	s := &Sample{Op: "chat", Intended: start, Start: start, End: start.Add(time.Second), TTFB: time.Millisecond,
		Measures: ms, Counters: [NumCounters]int64{PromptTokens: 20, OutputTokens: 100}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			r.Record(i, s)
		}
	})
}

func BenchmarkRecord(b *testing.B) {
	start := time.Now()
	r := NewRecorder(8, start)
	s := &Sample{Op: "get", Intended: start, Start: start, End: start.Add(20 * time.Millisecond), TTFB: time.Millisecond}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			r.Record(i, s)
		}
	})
}

// BenchmarkRecordFailed records failed operations only (a 500 answered at
// once): the failed-latency histogram is made on the shard's first failure
// and reused, so a failure costs what a success does.
func BenchmarkRecordFailed(b *testing.B) {
	start := time.Now()
	r := NewRecorder(8, start)
	s := &Sample{Op: "get", Intended: start, Start: start, End: start.Add(200 * time.Microsecond), Class: Status5xx, Message: "500"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			r.Record(i, s)
		}
	})
}
