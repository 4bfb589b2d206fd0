package s3driver

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"
)

// readBufSize is each VU's buffer for GET bodies.
const readBufSize = 128 << 10

// vuState is what one VU keeps from operation to operation: its random
// source, the buffer GET bodies are read into, the reader PUT bodies are
// sent from, the keys it wrote, and the trace that stamps connect and first
// response byte. A VU runs one operation at a time; the trace hooks may
// fire late for a request cut short, so what they write is atomic and a
// stamp from before the current start is ignored.
type vuState struct {
	vu   int
	rng  *rand.Rand
	buf  []byte
	body payloadReader

	// Fresh names this VU has PUT: [0, next) were attempted, [0, oldest)
	// removed again by its DELETEs. next is read by Cleanup.
	next   atomic.Int64
	oldest int64

	epoch     time.Time
	firstByte atomic.Int64 // ns since epoch at the first response byte; 0 if none
	connect   atomic.Int64 // open time of a new connection; 0 if reused
	trace     *httptrace.ClientTrace
	parent    context.Context // the last ctx Do was given ...
	traced    context.Context // ... and it with the trace attached
}

func newVUState(vu int, seed, stream uint64, epoch time.Time) *vuState {
	s := &vuState{vu: vu, rng: newRNG(seed, stream), buf: make([]byte, readBufSize), epoch: epoch}
	s.trace = &httptrace.ClientTrace{
		GotConn:              s.gotConn,
		GotFirstResponseByte: func() { s.firstByte.Store(s.now()) },
	}
	return s
}

func (s *vuState) now() int64 { return int64(time.Since(s.epoch)) }

func (s *vuState) gotConn(info httptrace.GotConnInfo) {
	if d := dial.ClaimConnect(info.Conn); d > 0 {
		s.connect.Store(int64(d))
	}
}

// begin resets the stamps for a new operation and returns its start.
func (s *vuState) begin() int64 {
	s.firstByte.Store(0)
	s.connect.Store(0)
	return s.now()
}

// ctx returns parent with the VU's trace attached. The engine passes the
// same ctx to every Do, so this allocates once per VU, not per operation.
func (s *vuState) ctx(parent context.Context) context.Context {
	if parent != s.parent {
		s.parent = parent
		s.traced = httptrace.WithClientTrace(parent, s.trace)
	}
	return s.traced
}

// responseTTFB is the time from start to the first response byte, 0 if
// none came in this operation.
func (s *vuState) responseTTFB(start int64) time.Duration {
	if fb := s.firstByte.Load(); fb >= start && fb > 0 {
		return time.Duration(fb - start)
	}
	return 0
}

// payloadReader sends a slice of the driver's random buffer as a PUT body
// and counts the bytes the client took. It is an io.ReadSeeker (minio-go
// rewinds before sending) but not an io.ReaderAt, so minio-go reads it
// through Read and every byte is counted.
type payloadReader struct {
	b []byte
	i int
	n int64 // bytes read since reset
}

func (p *payloadReader) reset(b []byte) { *p = payloadReader{b: b} }

func (p *payloadReader) Read(b []byte) (int, error) {
	if p.i >= len(p.b) {
		return 0, io.EOF
	}
	n := copy(b, p.b[p.i:])
	p.i += n
	p.n += int64(n)
	return n, nil
}

func (p *payloadReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = int64(p.i) + offset
	case io.SeekEnd:
		abs = int64(len(p.b)) + offset
	}
	if abs < 0 || abs > int64(len(p.b)) {
		return 0, errors.New("payload seek out of range")
	}
	p.i = int(abs)
	return abs, nil
}
