package remotewrite

import (
	"bytes"
	"context"
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
)

// builder is what building a request reuses from one request to the next:
// the WriteRequest and the arrays its series, labels and samples live in,
// the protobuf and snappy buffers, and the batch description. Label names
// and values are shared strings from the template and the epoch state, so
// filling a request allocates nothing once the buffers have grown. A
// builder of 2000 samples holds about 2 MB; a driver has a few of them
// (builders), not one per VU, so that VUs waiting for a slow target or a
// starved generator cost no more than their request's compressed body.
type builder struct {
	req     prompb.WriteRequest
	ts      []prompb.TimeSeries
	labels  []prompb.Label
	samples []prompb.Sample
	pb      []byte // marshalled WriteRequest
	z       []byte // snappy block, full capacity
	batch   batch
	v2      bool    // the next request is remote write 2.0 (w2), not 1.0 (req)
	w2      v2State // remote write 2.0's request and buffers
	hs      histState
	ex      exState
	bound   int // of the request's encoded size, but for 2.0's symbols (encode)
}

func newBuilder() *builder { return &builder{} }

// vuState is what one VU keeps between requests: the body it sends, what
// the body carries (for the ack log), a body reader and a buffer for
// reading answers.
type vuState struct {
	body  []byte
	batch batch
	rd    bytes.Reader
	drain []byte
}

const drainSize = 4 << 10

func newVUState() *vuState { return &vuState{drain: make([]byte, drainSize)} }

// builders is a fixed set of builders that Do takes one of to build a
// request and gives back before sending it: building is CPU work, more
// builders than cores would not build faster, only hold more memory.
type builders chan *builder

func newBuilders(n int) builders {
	b := make(builders, n)
	for range n {
		b <- newBuilder()
	}
	return b
}

// build takes a builder, waiting for one when all are in use (the wait is
// in the request's latency, measured from its intended start), fills it
// with the next batch of version v2 or 1.0, encodes it, and copies the
// body and the batch into st.
func (d *Driver) build(ctx context.Context, st *vuState, v2 bool) error {
	var bd *builder
	select {
	case bd = <-d.builders:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { d.builders <- bd }()
	bd.v2 = v2
	d.gen.fill(bd, d.batch, d.now())
	body, err := bd.encode()
	if err != nil {
		return err
	}
	st.body = append(d.takeBody(), body...)
	b := &bd.batch
	st.batch.segs = append(st.batch.segs[:0], b.segs...)
	st.batch.hists = append(st.batch.hists[:0], b.hists...)
	st.batch.samples, st.batch.histograms, st.batch.exemplars, st.batch.ts = b.samples, b.histograms, b.exemplars, b.ts
	return nil
}

// reserve makes room for n series of at most maxLabels labels each, so
// that filling never reallocates an array a series already points into.
func (st *builder) reserve(n, maxLabels int) {
	if cap(st.ts) < n {
		st.ts = make([]prompb.TimeSeries, n)
		st.samples = make([]prompb.Sample, n)
	}
	if need := n * maxLabels; cap(st.labels) < need {
		st.labels = make([]prompb.Label, 0, need)
	}
}

// encode marshals the request (1.0 or 2.0, as st.v2 says) and compresses
// it with snappy's block format, as both versions want. The result lives
// in st until the next encode.
//
// It marshals without asking the request its size first (a whole extra
// pass over it, an eighth of the request's CPU): fill added up a bound of
// the encoded size (st.bound), the generated MarshalToSizedBuffer writes
// from the end of the buffer it is given, and the message is the tail it
// wrote. Should the bound ever fall short, the marshaller panics on the
// buffer's end; encode then sizes the request and marshals it again.
func (st *builder) encode() ([]byte, error) {
	bound := st.bound
	if st.v2 {
		for _, s := range st.w2.req.Symbols {
			bound += 6 + len(s)
		}
	}
	pb, err := st.marshal(bound)
	if err != nil {
		return nil, fmt.Errorf("cannot marshal write request: %w", err)
	}
	if pb == nil { // the bound fell short
		size := st.w2.req.Size()
		if !st.v2 {
			size = st.req.Size()
		}
		if pb, err = st.marshal(size); err != nil || pb == nil {
			return nil, fmt.Errorf("cannot marshal write request of %d bytes: %v", size, err)
		}
	}
	need := s2.MaxEncodedLen(len(pb))
	if need < 0 {
		return nil, fmt.Errorf("cannot compress write request: %d bytes is too large for snappy", len(pb))
	}
	if cap(st.z) < need {
		st.z = make([]byte, need+need/4)
	}
	return s2.EncodeSnappy(st.z[:need], pb), nil
}

// marshal marshals the request into the tail of a buffer of size bytes
// and returns the message; nil when it did not fit.
func (st *builder) marshal(size int) (pb []byte, err error) {
	if cap(st.pb) < size {
		st.pb = make([]byte, size+size/4)
	}
	buf := st.pb[:size]
	defer func() {
		if recover() != nil {
			pb, err = nil, nil
		}
	}()
	var n int
	if st.v2 {
		n, err = st.w2.req.OptimizedMarshalToSizedBuffer(buf)
	} else {
		n, err = st.req.MarshalToSizedBuffer(buf)
	}
	if err != nil {
		return nil, err
	}
	return buf[size-n:], nil
}

// Bounds of the encoded size of the parts of a request, in bytes: a
// field's tag is 1 byte, a length or an int32 at most 5, an int64 at most
// 10, a double 8.
const (
	labelBound     = 18  // a label's tag, length and its name's and value's tags and lengths, beside their bytes
	seriesBound    = 6   // a series' tag and length
	sampleBound    = 26  // a sample and its tag and length (2.0's too)
	metadataBound  = 30  // 2.0: type, help and unit refs
	histogramBound = 160 // a native histogram but its bucket deltas (10 bytes each) and spans
	exemplarBound  = 110 // an exemplar with its trace_id label, beside the label's bytes
)

// sizeBound is a bound of the encoded size of t's series of either
// version, but for its instance and job values (fill adds them).
func sizeBound(t *tseries) int {
	n := seriesBound + metadataBound + 6 + 5*len(t.refs)
	for _, l := range t.labels {
		n += labelBound + len(l.Name) + len(l.Value)
	}
	if t.kind == nhist {
		return n + histogramBound + 10*len(t.native.shares) + 20
	}
	return n + sampleBound
}

// takeBody is an empty buffer for a request's body, from those that
// requests already sent gave back (putBody), so that only the requests in
// flight hold a body.
func (d *Driver) takeBody() []byte {
	if p, ok := d.bodies.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return nil
}

// putBody gives st's body back once it is sent.
func (d *Driver) putBody(st *vuState) {
	if st.body != nil {
		b := st.body
		d.bodies.Put(&b)
		st.body = nil
	}
}
