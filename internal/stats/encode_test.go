package stats

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestEncodeIsReadByTheLibraryDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(*Hist){
		"empty":  func(*Hist) {},
		"single": func(h *Hist) { h.Record(20 * time.Millisecond) },
		"spread": func(h *Hist) {
			for i := 0; i < 50000; i++ {
				h.Record(time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond)))
			}
		},
		"extremes": func(h *Hist) {
			h.Record(time.Microsecond)
			h.Record(time.Hour)
			for i := 0; i < 300; i++ {
				h.Record(time.Duration(rng.IntN(1000)) * time.Second)
			}
		},
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHist()
			fill(h)
			b, err := h.Encode()
			if err != nil {
				t.Fatal(err)
			}
			lib, err := hdr.Decode(b)
			if err != nil {
				t.Fatalf("the library cannot decode our encoding: %v", err)
			}
			if !(&Hist{h: lib}).Equal(h) || lib.TotalCount() != h.Count() || lib.Max() != h.h.Max() {
				t.Fatalf("decoded histogram differs: count %d max %d, want %d %d",
					lib.TotalCount(), lib.Max(), h.h.TotalCount(), h.h.Max())
			}
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
				if got, want := lib.ValueAtQuantile(100*q), h.h.ValueAtQuantile(100*q); got != want {
					t.Errorf("decoded p%v = %d, want %d", 100*q, got, want)
				}
			}
			ours, err := DecodeHist(b)
			if err != nil || !ours.Equal(h) {
				t.Fatalf("DecodeHist round trip failed: %v", err)
			}
		})
	}
}

func TestDecodedHistogramsAreSmallAndGrowWhenNeeded(t *testing.T) {
	h := NewHist()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeHist(b)
	if err != nil {
		t.Fatal(err)
	}
	if full, small := len(hdr.New(histLowest, histHighest, histSigFigs).Export().Counts), counts(d); small*8 > full {
		t.Errorf("decoded histogram has %d counts, the full range %d: want at most an eighth", small, full)
	}
	// Recording or merging a larger value widens it instead of losing it.
	d.Record(2 * time.Second)
	other := NewHist()
	other.Record(30 * time.Minute)
	d.Merge(other)
	if d.Count() != 1002 || d.Max() < 30*time.Minute {
		t.Errorf("after growing: count %d max %v, want 1002 and 30m", d.Count(), d.Max())
	}
	want := NewHist()
	want.Merge(h)
	want.Record(2 * time.Second)
	want.Record(30 * time.Minute)
	if !d.Equal(want) || !want.Equal(d) {
		t.Error("a widened histogram differs from recording the same values into a full one")
	}
}

func TestPutZigZagMatchesLEB128For9Bytes(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}}, {-1, []byte{1}}, {1, []byte{2}}, {63, []byte{126}}, {64, []byte{0x80, 1}},
		{-65, []byte{0x81, 1}},
		// Past 56 bits the ninth byte holds eight bits, no continuation bit.
		{1 << 62, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}},
		{-1 << 63, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		var buf [9]byte
		got := buf[:putZigZag(buf[:], c.v)]
		if string(got) != string(c.want) {
			t.Errorf("putZigZag(%d) = % x, want % x", c.v, got, c.want)
		}
	}
}

// BenchmarkEncode is the cost of storing one histogram of an interval.
func BenchmarkEncode(b *testing.B) {
	h := NewHist()
	for i := 0; i < 20000; i++ {
		h.Record(time.Duration(100+i%5000) * time.Microsecond)
	}
	b.Run("perflab", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := h.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCountsEncoding: counts are written up to the last non-zero one, a
// run of zeros as one negative number (the V2 format's run-length form).
func TestCountsEncoding(t *testing.T) {
	for _, c := range []struct {
		counts []int64
		want   []byte
	}{
		{[]int64{0, 0, 0}, nil},
		{[]int64{5, 0, 0}, []byte{10}},
		{[]int64{0, 0, 5}, []byte{3, 10}},
		{[]int64{1, 0, 0, 0, 2, 0}, []byte{2, 5, 4}},
	} {
		var b bytes.Buffer
		n := appendCounts(&b, c.counts)
		if n != len(c.want) || !bytes.Equal(b.Bytes(), c.want) {
			t.Errorf("appendCounts(%v) = % x (%d), want % x", c.counts, b.Bytes(), n, c.want)
		}
	}
}
