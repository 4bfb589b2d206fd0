package stats

import (
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
			if !lib.Equals(h.h) {
				t.Fatalf("decoded histogram differs: count %d max %d, want %d %d",
					lib.TotalCount(), lib.Max(), h.h.TotalCount(), h.h.Max())
			}
			ours, err := DecodeHist(b)
			if err != nil || !ours.Equal(h) {
				t.Fatalf("DecodeHist round trip failed: %v", err)
			}
		})
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
