package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// encodedOf is the encoding (Encode) of the values (in µs) with the counts
// given, recorded into a histogram of perflab's layout up to highest.
func encodedOf(t *testing.T, highest int64, values map[int64]int64) []byte {
	t.Helper()
	h := hdr.New(histLowest, highest, histSigFigs)
	for v, n := range values {
		if err := h.RecordValues(v, n); err != nil {
			t.Fatal(err)
		}
	}
	b, err := (&Hist{h: h}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeReadsTheHourRangeAndRefusesBeyond: a stored histogram holds
// values up to the top of the hour's last bucket (2^32 - 1 µs); a value
// past it, from a tool with a wider range, is refused, also after others.
func TestDecodeReadsTheHourRangeAndRefusesBeyond(t *testing.T) {
	top := int64(1)<<32 - 1
	b := encodedOf(t, 2*top, map[int64]int64{1: 3, top: 2})
	x, err := DecodeHist(b)
	if err != nil {
		t.Fatalf("values up to %d µs: %v", top, err)
	}
	if x.Count() != 5 || x.Max() != time.Duration(top)*time.Microsecond || x.Min() != time.Microsecond {
		t.Errorf("count %d, min %v, max %v; want 5, 1µs, %v", x.Count(), x.Min(), x.Max(), time.Duration(top)*time.Microsecond)
	}
	for name, values := range map[string]map[int64]int64{
		"alone":        {top + 1: 1},
		"after others": {1: 1, 2: 1, top + 1: 1},
	} {
		_, err := DecodeHist(encodedOf(t, 2*top, values))
		if err == nil || !strings.Contains(err.Error(), "beyond an hour") {
			t.Errorf("%s: a value of %d µs read with error %v, want it refused as beyond an hour", name, top+1, err)
		}
	}
}

// TestDecodeReadsCountsOfNineBytes: a count past 2^55 takes the ninth
// byte of the encoding, all eight bits of it, and it is read back whole.
func TestDecodeReadsCountsOfNineBytes(t *testing.T) {
	for _, n := range []int64{1 << 56, 1 << 62} { // the ninth byte under 0x80, and over
		x, err := DecodeHist(encodedOf(t, histFirst, map[int64]int64{1: 1, 2000: n}))
		if err != nil {
			t.Fatal(err)
		}
		if x.Count() != n+1 || x.Quantile(1) != 2000*time.Microsecond {
			t.Errorf("count %d p100 %v, want %d and 2ms", x.Count(), x.Quantile(1), n+1)
		}
	}
}

// v2Encoded is a V2 encoding by hand of perflab's layout: counts as the
// payload, length as the payload's length in the header.
func v2Encoded(counts []byte, length int) []byte {
	raw := make([]byte, v2HeaderSize, v2HeaderSize+len(counts))
	binary.BigEndian.PutUint32(raw[0:], uint32(v2Cookie))
	binary.BigEndian.PutUint32(raw[4:], uint32(length))
	binary.BigEndian.PutUint32(raw[12:], histSigFigs)
	binary.BigEndian.PutUint64(raw[16:], histLowest)
	binary.BigEndian.PutUint64(raw[24:], uint64(histHighest))
	binary.BigEndian.PutUint64(raw[32:], math.Float64bits(1))
	raw = append(raw, counts...)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write(raw)
	_ = w.Close()
	bin := binary.BigEndian.AppendUint32(nil, uint32(v2CompressedCookie))
	bin = binary.BigEndian.AppendUint32(bin, uint32(z.Len()))
	return []byte(base64.StdEncoding.EncodeToString(append(bin, z.Bytes()...)))
}

// TestDecodeReadsThePayloadTheHeaderGives: bytes after the payload's
// length are not counts, as the library reads them.
func TestDecodeReadsThePayloadTheHeaderGives(t *testing.T) {
	counts := append(append(zz(-10), zz(4)...), zz(7)...) // 4 at 10 µs, 7 at 11 µs
	for _, c := range []struct {
		length int
		want   int64
	}{{len(counts), 11}, {len(counts) - 1, 4}, {len(counts) + 5, 11}} {
		b := v2Encoded(counts, c.length)
		x, err := DecodeHist(b)
		if err != nil {
			t.Fatalf("length %d: %v", c.length, err)
		}
		if x.Count() != c.want || x.Min() != 10*time.Microsecond {
			t.Errorf("length %d of %d: count %d min %v, want %d and 10µs", c.length, len(counts), x.Count(), x.Min(), c.want)
		}
		if lib, err := hdr.Decode(b); err == nil && lib.TotalCount() != x.Count() {
			t.Errorf("length %d of %d: count %d, the library's %d", c.length, len(counts), x.Count(), lib.TotalCount())
		}
	}
}

// TestEmptyDecodedHistogramHoldsNoCounts: a stored run's empty histograms
// are read back by the thousand; each costs no counts until written to.
func TestEmptyDecodedHistogramHoldsNoCounts(t *testing.T) {
	for name, h := range map[string]*Hist{"new": NewHist(), "empty": EmptyHist()} {
		b, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		x, err := DecodeHist(b)
		if err != nil {
			t.Fatal(err)
		}
		if x.Count() != 0 || counts(x) != 0 {
			t.Errorf("%s: read back with %d values in %d counts, want none", name, x.Count(), counts(x))
		}
	}
}
