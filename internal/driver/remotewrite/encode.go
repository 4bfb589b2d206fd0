package remotewrite

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
)

// vuState is what one VU reuses from request to request: the WriteRequest
// and the arrays its series, labels and samples live in, the protobuf and
// snappy buffers, the batch description, and a body reader. Label names and
// values are shared strings from the template and the epoch state, so
// filling a request allocates nothing once the buffers have grown.
type vuState struct {
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
	rd      bytes.Reader
	drain   []byte // response body reads
}

const drainSize = 4 << 10

func newVUState() *vuState { return &vuState{drain: make([]byte, drainSize)} }

// reserve makes room for n series of at most maxLabels labels each, so
// that filling never reallocates an array a series already points into.
func (st *vuState) reserve(n, maxLabels int) {
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
func (st *vuState) encode() ([]byte, error) {
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
