package stats

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/klauspost/compress/flate"
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
}

var encoders = sync.Pool{New: func() any { return &encoder{} }}

// zlibHeader opens a zlib stream: deflate with a 32 KiB window (0x78), the
// fastest level, and the check bits that make the pair a multiple of 31.
var zlibHeader = []byte{0x78, 0x01}

// Encode returns the compressed HdrHistogram V2 encoding (base64 text), the
// format every HdrHistogram implementation reads (hdr.Decode among them).
// It writes the same layout as the library's own encoder, but compresses
// with a stateless deflate into pooled buffers: the library compresses at
// the best level with a fresh compressor each time, about 0.5 ms and 850 KB
// per histogram, paid for four histograms per operation every second, and
// even a reused zlib writer keeps 1.2 MB of tables.
func (x *Hist) Encode() ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.raw.Reset()
	e.raw.Write(make([]byte, v2HeaderSize)) // filled in below
	lowest, sigFigs, n := int64(histLowest), int64(histSigFigs), 0
	if x.h != nil {
		s := x.h.Export()
		lowest, sigFigs, n = s.LowestTrackableValue, s.SignificantFigures, appendCounts(&e.raw, s.Counts)
	} else {
		n, _ = e.raw.Write(x.pk().counts) // packed counts are appendCounts' own
	}
	h := e.raw.Bytes()[:v2HeaderSize]
	binary.BigEndian.PutUint32(h[0:], uint32(v2Cookie))
	binary.BigEndian.PutUint32(h[4:], uint32(n))
	binary.BigEndian.PutUint32(h[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(h[12:], uint32(sigFigs))
	binary.BigEndian.PutUint64(h[16:], uint64(lowest))
	binary.BigEndian.PutUint64(h[24:], uint64(encodedHighest(x)))
	binary.BigEndian.PutUint64(h[32:], math.Float64bits(1)) // integer to double ratio

	e.zbuf.Reset()
	e.zbuf.Write(zlibHeader)
	if err := flate.StatelessDeflate(&e.zbuf, e.raw.Bytes(), true, nil); err != nil {
		return nil, fmt.Errorf("cannot encode histogram: %w", err)
	}
	e.zbuf.Write(binary.BigEndian.AppendUint32(nil, adler32.Checksum(e.raw.Bytes())))
	bin := make([]byte, 8+e.zbuf.Len())
	binary.BigEndian.PutUint32(bin[0:], uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(bin[4:], uint32(e.zbuf.Len()))
	copy(bin[8:], e.zbuf.Bytes())
	out := make([]byte, base64.StdEncoding.EncodedLen(len(bin)))
	base64.StdEncoding.Encode(out, bin)
	return out, nil
}

// encodedHighest is the highest trackable value written in the header: no
// more than the histogram needs (its maximum, at least histFirst), so that a
// decoder allocates counts for that range only — 16 KiB for an interval whose
// slowest operation took a millisecond, against 184 KiB for the full hour.
// Bucket boundaries do not depend on it, so the counts are the same.
func encodedHighest(x *Hist) int64 {
	return min(max(x.maxValue(), histFirst), histHighest)
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
			for counts[i] == 0 { // counts[last] is not 0: the run ends before it
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
