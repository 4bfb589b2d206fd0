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
func (st *builder) encode() ([]byte, error) {
	var size int
	if st.v2 {
		size = st.w2.req.Size()
	} else {
		size = st.req.Size()
	}
	if cap(st.pb) < size {
		st.pb = make([]byte, size+size/4)
	}
	pb := st.pb[:size]
	var err error
	if st.v2 {
		_, err = st.w2.req.OptimizedMarshalToSizedBuffer(pb)
	} else {
		_, err = st.req.MarshalToSizedBuffer(pb)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot marshal write request: %w", err)
	}
	need := s2.MaxEncodedLen(size)
	if need < 0 {
		return nil, fmt.Errorf("cannot compress write request: %d bytes is too large for snappy", size)
	}
	if cap(st.z) < need {
		st.z = make([]byte, need+need/4)
	}
	return s2.EncodeSnappy(st.z[:need], pb), nil
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
