package httpdriver

import "io"

// Response bodies are read through a VU's fixed buffer and counted, never
// held whole: what a server announces (a Content-Length of 5 GiB) decides
// nothing of what perflab allocates.

const (
	// drainBufSize is the buffer a VU reads response bodies through.
	drainBufSize = 32 << 10

	// wholeBodyMax is the largest body fasthttp may read whole into its
	// response (MaxResponseBodySize); a larger one, or one of unknown
	// length, is streamed through the drain buffer.
	wholeBodyMax = drainBufSize
)

// bodySink counts a response body. As an io.ReaderFrom it reads through
// its own buffer; fasthttp's Response.BodyWriteTo uses that, so both
// clients read bodies the same way.
type bodySink struct {
	buf  []byte // the drain buffer
	want int64  // the length announced, or -1
	n    int64
}

func newBodySink() bodySink { return bodySink{buf: make([]byte, drainBufSize)} }

// reset readies s for a new body of the length a server announced (-1:
// none).
func (s *bodySink) reset(want int64) { s.n, s.want = 0, want }

func (s *bodySink) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	return len(p), nil
}

// ReadFrom reads r to its end, or to its first error, through s's
// buffer. An end before the announced length is io.ErrUnexpectedEOF
// (fasthttp's body stream reports it as io.EOF).
func (s *bodySink) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for {
		m, err := r.Read(s.buf)
		n += int64(m)
		_, _ = s.Write(s.buf[:m])
		if err == io.EOF {
			if s.want >= 0 && s.n < s.want {
				return n, io.ErrUnexpectedEOF
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
