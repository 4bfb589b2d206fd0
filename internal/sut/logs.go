package sut

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

const (
	// ringLines is how many log lines a component keeps in memory.
	ringLines = 256
	// maxLineBytes caps one remembered line; longer lines are cut (the log
	// file keeps them whole).
	maxLineBytes = 2048
	// maxPending caps an unfinished line held back to be scrubbed whole;
	// a longer one is scrubbed and written in pieces.
	maxPending = 64 << 10
)

// ring keeps the last lines written by a component, stdout and stderr
// interleaved in the order perflab read them.
type ring struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[r.next] = line
	r.next++
	if r.next == len(r.lines) {
		r.next, r.full = 0, true
	}
}

// last returns up to n of the most recent lines, oldest first.
func (r *ring) last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	size := r.next
	if r.full {
		size = len(r.lines)
	}
	n = min(n, size)
	if n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := r.next - n; i < r.next; i++ {
		out = append(out, r.lines[(i+len(r.lines))%len(r.lines)])
	}
	return out
}

// lineSplitter turns a byte stream into lines for the ring. It keeps at
// most maxLineBytes of an unfinished line.
type lineSplitter struct {
	ring    *ring
	scrub   func(string) string // nil: lines as they are
	partial []byte
	cut     bool
}

func (s *lineSplitter) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLineBytes - len(s.partial); len(chunk) > room {
			chunk, s.cut = chunk[:room], true
		}
		s.partial = append(s.partial, chunk...)
		if i < 0 {
			return
		}
		s.flush()
		p = p[i+1:]
	}
}

// flush emits the unfinished line.
func (s *lineSplitter) flush() {
	line := string(bytes.TrimSuffix(s.partial, []byte("\r")))
	if s.scrub != nil {
		line = s.scrub(line)
	}
	if s.cut {
		line += " …"
	}
	s.ring.add(line)
	s.partial, s.cut = s.partial[:0], false
}

// stream copies one of a component's output pipes into its log file and the
// ring. It always drains the pipe, even when the file cannot be written, so
// the component never blocks on a full pipe.
type stream struct {
	r       *os.File            // read end of the pipe
	file    *os.File            // log file, nil when the spec has no LogDir
	scrub   func(string) string // Spec.Scrub
	pending []byte              // with scrub, the unfinished line not yet written
	err     error               // first write error, read after done
	done    chan struct{}
}

// write writes p to the log file: as it is, or with scrub set, whole
// lines scrubbed, the unfinished last one held back (up to maxPending).
func (st *stream) write(p []byte) error {
	if st.scrub == nil {
		_, err := st.file.Write(p)
		return err
	}
	st.pending = append(st.pending, p...)
	end := bytes.LastIndexByte(st.pending, '\n') + 1
	if end == 0 && len(st.pending) < maxPending {
		return nil
	}
	if end == 0 {
		end = len(st.pending)
	}
	_, err := st.file.WriteString(st.scrub(string(st.pending[:end])))
	st.pending = append(st.pending[:0], st.pending[end:]...)
	return err
}

func (st *stream) copy(split *lineSplitter) {
	defer close(st.done)
	defer st.r.Close()
	buf := make([]byte, 64<<10)
	for {
		n, rerr := st.r.Read(buf)
		if n > 0 {
			if st.file != nil && st.err == nil {
				st.err = st.write(buf[:n])
			}
			split.write(buf[:n])
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, os.ErrClosed) && st.err == nil {
				st.err = rerr
			}
			break
		}
	}
	if len(split.partial) > 0 || split.cut {
		split.flush()
	}
	if st.file != nil {
		if len(st.pending) > 0 && st.err == nil {
			_, st.err = st.file.WriteString(st.scrub(string(st.pending)))
		}
		if err := st.file.Close(); err != nil && st.err == nil {
			st.err = err
		}
	}
}

// openStreams creates the stdout and stderr pipes and log files. The
// returned write ends go to the child; the caller closes them after start.
func openStreams(s Spec) ([2]*stream, [2]*os.File, error) {
	var streams [2]*stream
	var writers [2]*os.File
	fail := func(err error) ([2]*stream, [2]*os.File, error) {
		for i := range 2 {
			closeFile(writers[i])
			if streams[i] != nil {
				closeFile(streams[i].r)
				closeFile(streams[i].file)
			}
		}
		return [2]*stream{}, [2]*os.File{}, err
	}
	if s.LogDir != "" {
		if err := os.MkdirAll(s.LogDir, 0o755); err != nil {
			return fail(fmt.Errorf("cannot create log directory: %w", err))
		}
	}
	for i, suffix := range []string{".stdout.log", ".stderr.log"} {
		st := &stream{scrub: s.Scrub, done: make(chan struct{})}
		streams[i] = st
		var err error
		if s.LogDir != "" {
			path := filepath.Join(s.LogDir, s.Name+suffix)
			if st.file, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
				return fail(fmt.Errorf("cannot open log file: %w", err))
			}
		}
		if st.r, writers[i], err = os.Pipe(); err != nil {
			return fail(fmt.Errorf("cannot create output pipe: %w", err))
		}
	}
	return streams, writers, nil
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}
