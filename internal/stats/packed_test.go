package stats

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// packedCases are histograms of many shapes: empty, one value, the range's
// extremes, values in every bucket, dense sub-millisecond latencies.
func packedCases() map[string]*Hist {
	rng := rand.New(rand.NewPCG(7, 9))
	cases := map[string]*Hist{}
	fill := func(name string, f func(h *Hist)) {
		h := NewHist()
		f(h)
		cases[name] = h
	}
	fill("empty", func(*Hist) {})
	fill("single", func(h *Hist) { h.Record(20 * time.Millisecond) })
	fill("a count of 0 µs", func(h *Hist) { // stored before values were clamped to 1 µs
		_ = h.dense().RecordValue(0)
		h.Record(5 * time.Microsecond)
	})
	fill("first bucket's edge", func(h *Hist) { // 2048 µs starts the buckets 2 µs wide
		for v := 2046; v <= 2050; v++ {
			h.Record(time.Duration(v) * time.Microsecond)
		}
	})
	fill("extremes", func(h *Hist) { h.Record(time.Nanosecond); h.Record(2 * time.Hour) })
	fill("every bucket", func(h *Hist) {
		for d := time.Microsecond; d < time.Hour; d = d*3/2 + time.Microsecond {
			for k := 0; k < 1+rng.IntN(3); k++ {
				h.Record(d + time.Duration(rng.Int64N(int64(d))))
			}
		}
	})
	fill("sub-millisecond", func(h *Hist) {
		for i := 0; i < 20000; i++ {
			h.Record(time.Duration(rng.ExpFloat64()*200) * time.Microsecond)
		}
	})
	fill("long tail", func(h *Hist) {
		for i := 0; i < 5000; i++ {
			h.Record(time.Duration(rng.ExpFloat64()*float64(40*time.Millisecond)) + time.Duration(rng.IntN(3))*time.Second)
		}
	})
	return cases
}

// packedCopy is h encoded and decoded: packed.
func packedCopy(t *testing.T, h *Hist) *Hist {
	t.Helper()
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodeHist(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.p == nil && h.Count() > 0 {
		t.Fatal("a decoded histogram of perflab's layout is not packed")
	}
	return p
}

func TestPackedHistogramAnswersAsTheDenseOne(t *testing.T) {
	qs := []float64{0, 1e-9, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1, 1.5}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		qs = append(qs, rng.Float64())
	}
	for name, h := range packedCases() {
		t.Run(name, func(t *testing.T) {
			p := packedCopy(t, h)
			if p.Count() != h.Count() || p.Max() != h.Max() || p.Min() != h.Min() || p.Mean() != h.Mean() {
				t.Errorf("packed count %d max %v min %v mean %v, dense %d %v %v %v",
					p.Count(), p.Max(), p.Min(), p.Mean(), h.Count(), h.Max(), h.Min(), h.Mean())
			}
			for _, q := range qs {
				if got, want := p.Quantile(q), h.Quantile(q); got != want {
					t.Errorf("packed q%v = %v, dense %v", q, got, want)
				}
			}
			if !slices.Equal(p.Distribution(), h.Distribution()) {
				t.Error("packed distribution differs from the dense one")
			}
			if !p.Equal(h) || !h.Equal(p) {
				t.Error("packed and dense are not Equal")
			}
			a, _ := p.Encode()
			b, _ := h.Encode()
			if !bytes.Equal(a, b) {
				t.Error("packed encodes differently from the dense histogram")
			}
		})
	}
}

func TestPackedHistogramsMergeExactly(t *testing.T) {
	cases := packedCases()
	for name, h := range cases {
		for other, o := range cases {
			// Into a dense one, from packed or dense counts.
			fromPacked, fromDense := NewHist(), NewHist()
			fromPacked.Merge(packedCopy(t, h))
			fromPacked.Merge(packedCopy(t, o))
			fromDense.Merge(h)
			fromDense.Merge(o)
			if !fromPacked.Equal(fromDense) || fromPacked.Quantile(0.99) != fromDense.Quantile(0.99) {
				t.Errorf("%s + %s: merged from packed differs from merged from dense", name, other)
			}
			// Into a packed one, which unpacks first.
			into := packedCopy(t, h)
			into.Merge(packedCopy(t, o))
			into.Record(3 * time.Millisecond)
			fromDense.Record(3 * time.Millisecond)
			if !into.Equal(fromDense) || into.Max() != fromDense.Max() {
				t.Errorf("%s + %s: merged and recorded into a packed histogram differs", name, other)
			}
		}
	}
}

func TestEmptyHistAllocatesOnFirstValue(t *testing.T) {
	e := EmptyHist()
	if e.Count() != 0 || e.Quantile(0.5) != 0 || e.Max() != 0 || len(e.Distribution()) != 0 || !e.Equal(NewHist()) {
		t.Error("EmptyHist is not an empty histogram")
	}
	b, _ := e.Encode()
	want, _ := NewHist().Encode()
	if !bytes.Equal(b, want) {
		t.Error("EmptyHist encodes differently from NewHist")
	}
	e.Record(time.Millisecond)
	e.Merge(packedCopy(t, e))
	if e.Count() != 2 || e.Max() != time.Millisecond {
		t.Errorf("after a value and a merge: count %d max %v, want 2 and 1ms", e.Count(), e.Max())
	}
	e.Reset()
	if e.Count() != 0 {
		t.Error("Reset left values")
	}
}

func TestDecodeRejectsDamagedCounts(t *testing.T) {
	for name, payload := range map[string][]byte{
		"cut inside a count": {0x80},
		"beyond an hour":     append(zz(-maxCounts), zz(2)...),
	} {
		if _, err := packCounts(payload); err == nil {
			t.Errorf("%s: packCounts accepted it", name)
		}
	}
}

// zz is v as putZigZag writes it.
func zz(v int64) []byte {
	var b [9]byte
	return b[:putZigZag(b[:], v)]
}

// BenchmarkDecodeHist is the cost of reading one stored histogram back, as
// a report does for every interval of a run: B/op is what it keeps
// (packed) plus the transient buffers; the dense form was 16 KiB or more.
func BenchmarkDecodeHist(b *testing.B) {
	h := NewHist()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10000; i++ { // an interval at 10,000/s
		h.Record(time.Duration(100+rng.ExpFloat64()*400) * time.Microsecond)
	}
	enc, err := h.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeHist(enc); err != nil {
			b.Fatal(err)
		}
	}
	d, _ := DecodeHist(enc)
	b.ReportMetric(float64(len(d.p.counts)), "packed-bytes")
}
