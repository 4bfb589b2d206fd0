package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"iter"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A histogram read back from a store is kept packed: its counts as the V2
// encoding writes them (ZigZag LEB128, a run of k zeros as -k), without the
// compression. A report reads every interval of a run at once, and a
// histogram's dense counts take 16 KiB or more (a first bucket of 2048
// single-microsecond steps), its packed counts a byte or two for each value
// that occurred: a run's read-back grows with its length by a few KiB per
// interval, not by 80. A packed histogram answers quantiles, extremes and
// merges from the packed counts with the same results as the dense one;
// it is unpacked (dense) only when something is recorded or merged into it.

// The bucket layout for histLowest 1 and histSigFigs 3, as HdrHistogram
// lays it out: the first bucket holds 2048 sub-buckets one value wide; each
// later one holds 1024, twice as wide as the one before.
const (
	subBuckets    = 2048
	halfBuckets   = 1024
	halfMagnitude = 10
	maxCounts     = 23552 // the counts of the range up to histHighest
)

// packed is the counts of a read-only histogram.
type packed struct {
	counts []byte // appendCounts' encoding, no trailing zeros
	total  int64
}

var emptyPacked packed

// bucketAt is the lowest value of counts index i and the width of its
// bucket (HdrHistogram's valueFromIndex and sizeOfEquivalentValueRange).
func bucketAt(i int) (lowest, width int64) {
	if i < subBuckets {
		return int64(i), 1
	}
	b := i>>halfMagnitude - 1
	return int64(i&(halfBuckets-1)+halfBuckets) << b, 1 << b
}

// all yields the index and count of every non-zero count, in order.
func (p *packed) all() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		idx := 0
		for b := p.counts; ; {
			v, n := zigZag(b)
			if n == 0 {
				return // the end of b: packCounts checked every count
			}
			b = b[n:]
			if v < 0 { // equivalent mutant: v <= 0; packed counts hold no 0 (packCounts drops them)
				idx += int(-v)
				continue
			}
			if !yield(idx, v) {
				return
			}
			idx++
		}
	}
}

// zigZag reads one count as putZigZag wrote it and returns its length; a
// length of 0 means b ends inside the count (or is empty).
func zigZag(b []byte) (int64, int) {
	var u uint64
	for i, c := range b {
		if i == 8 { // a ninth byte carries its full eight bits
			return unZigZag(u | uint64(c)<<56), 9
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return unZigZag(u), i + 1
		}
	}
	return 0, 0
}

// unZigZag is the signed value of the ZigZag encoding u.
func unZigZag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// quantile is HdrHistogram's ValueAtPercentile(100 q), from packed counts.
func (p *packed) quantile(q float64) int64 {
	percentile := min(q*100, 100)
	at := int64(((percentile / 100) * float64(p.total)) + 0.5)
	var seen, lowest, width int64 = 0, 0, 1
	if at > 0 {
		for i, n := range p.all() {
			if seen += n; seen >= at {
				lowest, width = bucketAt(i)
				break
			}
		}
	}
	if percentile == 0 {
		return lowest
	}
	return lowest + width - 1
}

// extremes are HdrHistogram's Min and Max, from packed counts: the lowest
// value of the first non-empty bucket (0 µs too, as the library's Min) and
// the highest of the last.
func (p *packed) extremes() (lo, hi int64) {
	first := true
	for i := range p.all() {
		lowest, width := bucketAt(i)
		if first {
			lo, first = lowest, false
		}
		hi = lowest + width - 1
	}
	return lo, hi
}

// mean is HdrHistogram's Mean, from packed counts.
func (p *packed) mean() float64 {
	if p.total == 0 {
		return 0
	}
	var sum int64
	for i, n := range p.all() {
		lowest, width := bucketAt(i)
		sum += n * (lowest + width>>1)
	}
	return float64(sum) / float64(p.total)
}

// dense is p unpacked into counts whose range holds its values (newCounts).
func (p *packed) dense() *hdr.Histogram {
	_, hi := p.extremes()
	h := newCounts(hi)
	for i, n := range p.all() {
		lowest, _ := bucketAt(i)
		_ = h.RecordValues(lowest, n) // inside the range: newCounts holds hi
	}
	return h
}

// nonZero yields the index and count of every non-zero count of x, packed
// or dense.
func (x *Hist) nonZero() iter.Seq2[int, int64] {
	if x.h == nil {
		return x.pk().all()
	}
	return func(yield func(int, int64) bool) {
		for i, n := range x.h.Export().Counts {
			if n != 0 && !yield(i, n) {
				return
			}
		}
	}
}

// pk is x's packed counts: empty when x has neither.
func (x *Hist) pk() *packed {
	if x.p == nil {
		return &emptyPacked
	}
	return x.p
}

var errNotPacked = errors.New("not perflab's layout")

// inflaters are zlib readers, reused: each holds a 32 KiB window.
var inflaters sync.Pool

// decodeBufs hold the base64-decoded and the inflated bytes of one decode.
var decodeBufs = sync.Pool{New: func() any { return new([2]bytes.Buffer) }}

// decodePacked reads the base64 V2 compressed encoding b into packed
// counts. It reads histograms of perflab's layout only (lowest 1, three
// significant figures, no index offset): errNotPacked for another, which
// the library's decoder then reads.
func decodePacked(b []byte) (*packed, error) {
	bufs := decodeBufs.Get().(*[2]bytes.Buffer)
	defer decodeBufs.Put(bufs)
	bufs[0].Reset()
	bufs[0].Grow(base64.StdEncoding.DecodedLen(len(b)))
	bin := bufs[0].AvailableBuffer()[:base64.StdEncoding.DecodedLen(len(b))]
	n, err := base64.StdEncoding.Decode(bin, b)
	if err != nil {
		return nil, err
	}
	bin = bin[:n]
	// equivalent mutant: len(bin) <= 8; the library fails on 8 bytes with
	// the same "unexpected EOF" as inflate below.
	if len(bin) < 8 || binary.BigEndian.Uint32(bin)&^0xf0 != uint32(hdr.V2CompressedEncodingCookieBase) {
		return nil, errNotPacked
	}
	z := bin[8:min(len(bin), 8+int(binary.BigEndian.Uint32(bin[4:])))]
	bufs[1].Reset()
	if err := inflate(&bufs[1], z); err != nil {
		return nil, err
	}
	raw := bufs[1].Bytes()
	if len(raw) < v2HeaderSize || binary.BigEndian.Uint32(raw)&^0xf0 != uint32(hdr.V2EncodingCookieBase) ||
		binary.BigEndian.Uint32(raw[8:]) != 0 || binary.BigEndian.Uint32(raw[12:]) != histSigFigs ||
		binary.BigEndian.Uint64(raw[16:]) != histLowest ||
		math.Float64frombits(binary.BigEndian.Uint64(raw[32:])) != 1 {
		return nil, errNotPacked
	}
	payload := raw[v2HeaderSize:]
	return packCounts(payload[:min(len(payload), int(binary.BigEndian.Uint32(raw[4:])))])
}

// inflate writes the zlib stream z uncompressed to out.
func inflate(out *bytes.Buffer, z []byte) error {
	var r io.ReadCloser
	var err error
	if v := inflaters.Get(); v != nil {
		r = v.(io.ReadCloser)
		err = r.(zlib.Resetter).Reset(bytes.NewReader(z), nil)
	} else {
		r, err = zlib.NewReader(bytes.NewReader(z))
	}
	if err != nil {
		return err
	}
	defer inflaters.Put(r)
	_, err = out.ReadFrom(r)
	return err
}

// packCounts checks a V2 counts payload and writes it again as
// appendCounts would, explicit zeros and trailing zeros dropped, so that
// packed counts have one form.
func packCounts(payload []byte) (*packed, error) {
	out := bytes.NewBuffer(make([]byte, 0, len(payload)+9)) // never longer than payload but for a run cut at the end
	var tmp [9]byte
	p := &packed{}
	idx, next := 0, 0 // next: the index after the last count written
	for b := payload; len(b) > 0; {
		v, n := zigZag(b)
		if n == 0 {
			return nil, errors.New("counts cut short")
		}
		b = b[n:]
		switch {
		case v < -maxCounts: // a run past the range: only zeros may follow
			idx = maxCounts
		case v < 0:
			idx += int(-v)
		case v == 0:
			idx++
		default:
			if idx >= maxCounts {
				return nil, errors.New("a count beyond an hour")
			}
			if idx > next {
				out.Write(tmp[:putZigZag(tmp[:], -int64(idx-next))])
			}
			out.Write(tmp[:putZigZag(tmp[:], v)])
			p.total += v
			idx++
			next = idx
		}
	}
	p.counts = out.Bytes()
	return p, nil
}

// Pack keeps x's counts packed, as a histogram read back from a store
// keeps them: a few bytes per non-empty bucket rather than eight per bucket
// of its range (16 KiB and up). x answers exactly as before; recording or
// merging into it unpacks it again. For histograms that are kept and only
// read, such as a run's whole-window figures behind a report.
func (x *Hist) Pack() {
	if x.h == nil {
		return
	}
	var b bytes.Buffer
	appendCounts(&b, x.h.Export().Counts)
	p, err := packCounts(b.Bytes())
	if err != nil {
		return // appendCounts writes what packCounts reads: not expected
	}
	x.h, x.p = nil, p
}
