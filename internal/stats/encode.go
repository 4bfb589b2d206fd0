package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The cookies of the HdrHistogram V2 format (the "| 0x10" marks a 64-bit
// word size, as every implementation writes it).
const (
	v2Cookie           = hdr.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdr.V2CompressedEncodingCookieBase | 0x10
	v2HeaderSize       = 40
)

// encoder is the reusable state of one Encode call.
type encoder struct {
	raw  bytes.Buffer // header and counts, before compression
	zbuf bytes.Buffer // compressed
	zw   *zlib.Writer
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.BestSpeed) // a valid level: no error
	return e
}}

// Encode returns the compressed HdrHistogram V2 encoding (base64 text), the
// format every HdrHistogram implementation reads (hdr.Decode among them).
// It writes the same layout as the library's own encoder, but compresses
// at zlib's fastest level with pooled buffers: the library compresses at the
// best level with a fresh compressor each time, about 0.5 ms and 850 KB
// per histogram, paid for four histograms per operation every second.
func (x *Hist) Encode() ([]byte, error) {
	s := x.h.Export()
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.raw.Reset()
	e.raw.Write(make([]byte, v2HeaderSize)) // filled in below
	n := appendCounts(&e.raw, s.Counts)
	h := e.raw.Bytes()[:v2HeaderSize]
	binary.BigEndian.PutUint32(h[0:], uint32(v2Cookie))
	binary.BigEndian.PutUint32(h[4:], uint32(n))
	binary.BigEndian.PutUint32(h[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(h[12:], uint32(s.SignificantFigures))
	binary.BigEndian.PutUint64(h[16:], uint64(s.LowestTrackableValue))
	binary.BigEndian.PutUint64(h[24:], uint64(encodedHighest(x.h)))
	binary.BigEndian.PutUint64(h[32:], math.Float64bits(1)) // integer to double ratio

	e.zbuf.Reset()
	e.zw.Reset(&e.zbuf)
	if _, err := e.zw.Write(e.raw.Bytes()); err != nil {
		return nil, fmt.Errorf("cannot encode histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return nil, fmt.Errorf("cannot encode histogram: %w", err)
	}
	bin := make([]byte, 8+e.zbuf.Len())
	binary.BigEndian.PutUint32(bin[0:], uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(bin[4:], uint32(e.zbuf.Len()))
	copy(bin[8:], e.zbuf.Bytes())
	out := make([]byte, base64.StdEncoding.EncodedLen(len(bin)))
	base64.StdEncoding.Encode(out, bin)
	return out, nil
}

// encodedHighest is the highest trackable value written in the header: no
// more than the histogram needs (its maximum, at least 2048 µs), so that a
// decoder allocates counts for that range only — 16 KiB for an interval whose
// slowest operation took a millisecond, against 180 KiB for the full hour.
// Bucket boundaries do not depend on it, so the counts are the same.
func encodedHighest(h *hdr.Histogram) int64 {
	return min(max(h.Max(), 2048), histHighest)
}

// appendCounts writes counts up to the last non-zero one as ZigZag
// LEB128-64b9B numbers, a run of k zeros as -k; it returns the bytes written.
func appendCounts(b *bytes.Buffer, counts []int64) int {
	last := len(counts) - 1
	for last >= 0 && counts[last] == 0 {
		last--
	}
	start := b.Len()
	var tmp [9]byte
	for i := 0; i <= last; {
		v := counts[i]
		i++
		if v == 0 {
			run := int64(1)
			for i <= last && counts[i] == 0 { // equivalent mutant: i < last, counts[last] is not 0
				run++
				i++
			}
			v = -run
		}
		b.Write(tmp[:putZigZag(tmp[:], v)])
	}
	return b.Len() - start
}

// putZigZag writes v ZigZag-encoded as LEB128-64b9B: seven bits a byte with
// a continuation bit, except that a ninth byte carries its full eight bits.
func putZigZag(dst []byte, v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	for i := 0; i < 8; i++ {
		if u < 0x80 {
			dst[i] = byte(u)
			return i + 1
		}
		dst[i] = byte(u) | 0x80
		u >>= 7
	}
	dst[8] = byte(u)
	return 9
}
