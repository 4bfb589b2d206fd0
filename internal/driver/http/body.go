package httpdriver

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/secret"
)

// Response bodies are read through a fixed buffer and counted, never held
// whole: what a server announces (a Content-Length of 5 GiB) decides
// nothing of what perflab allocates. Only the start of an error response's
// body is kept, for its sample message. The buffer is borrowed from a pool
// for the body's read only: a VU waiting for its next arrival holds none,
// so a thousand VUs, most of them idle, cost a few buffers, not 32 MiB.

const (
	// drainBufSize is the buffer a response body is read through.
	drainBufSize = 32 << 10

	// sampleBodyMax bounds the start of an error response's body kept for
	// its message. It is longer than a person needs: a message is to be
	// shortened where it leaves perflab, after the scrubber has replaced
	// the secrets in it, so that none is cut before it is recognised. The
	// cut made here is kept clear of the request's own secrets (cutSecret).
	sampleBodyMax = 512

	// reasonMax bounds the reason phrase of a status line in a message.
	reasonMax = 100
)

// bodySink counts a response body and, when asked, keeps its first
// sampleBodyMax bytes. perflab's own client writes the body to it as its
// parser finds it; net/http's body is read through it (ReadFrom).
type bodySink struct {
	head []byte // the start of the body, when keep; allocated on first use
	keep bool
	want int64 // the length announced, or -1
	n    int64
}

func newBodySink() bodySink { return bodySink{} }

// drainBufs holds the drain buffers not in use.
var drainBufs = sync.Pool{New: func() any { return new([drainBufSize]byte) }}

// reset readies s for a new body of the length a server announced (-1:
// none); keep says whether to keep its start.
func (s *bodySink) reset(want int64, keep bool) {
	s.n, s.want, s.keep, s.head = 0, want, keep, s.head[:0]
	if keep && s.head == nil {
		s.head = make([]byte, 0, sampleBodyMax)
	}
}

func (s *bodySink) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	if s.keep { // a full head appends p[:0]
		s.head = append(s.head, p[:min(len(p), cap(s.head)-len(s.head))]...)
	}
	return len(p), nil
}

// ReadFrom reads r to its end, or to its first error, through a drain
// buffer. An end before the announced length is io.ErrUnexpectedEOF.
func (s *bodySink) ReadFrom(r io.Reader) (int64, error) {
	b := drainBufs.Get().(*[drainBufSize]byte)
	defer drainBufs.Put(b)
	buf := b[:]
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		_, _ = s.Write(buf[:m])
		if err == io.EOF {
			if s.n < s.want { // want is -1 when no length was announced
				return n, io.ErrUnexpectedEOF
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// statusMessage is "HTTP 404 Not Found" (the server's reason phrase, or
// Go's when the server sent none), then, when the body starts with text,
// ": " and that text on one line: `HTTP 500 Internal Server Error:
// {"message":"Something went wrong"}`. head is the body's start, total its
// length as read, secrets those of the request (see cutSecret).
func statusMessage(code int, reason string, head []byte, total int64, secrets []string) string {
	b, _ := clip([]byte(reason), reasonMax, false, secrets)
	if reason = oneLine(b); reason == "" {
		reason = http.StatusText(code)
	}
	msg := "HTTP " + strconv.Itoa(code)
	if reason != "" {
		msg += " " + reason
	}
	head, cut := clip(head, sampleBodyMax, total > int64(len(head)), secrets)
	text := oneLine(head)
	if text == "" {
		return msg
	}
	if cut {
		text += "..."
	}
	return msg + ": " + text
}

// clip is b cut to limit bytes, and whether it was cut or is, as more
// says, the start of something longer; the end of a cut b is kept clear of
// secrets (cutSecret).
func clip(b []byte, limit int, more bool, secrets []string) ([]byte, bool) {
	if len(b) > limit {
		b, more = b[:limit], true
	}
	if more {
		b = cutSecret(b, secrets)
	}
	return b, more
}

// minFragment is the shortest start of a secret cutSecret drops.
const minFragment = 3

// cutSecret drops from the end of head, a body's start cut there, what
// begins one of secrets (minFragment bytes or more of it): a server that
// echoes the request's headers may have been cut inside one, and the
// scrubber that later replaces whole secrets cannot recognise a fragment.
func cutSecret(head []byte, secrets []string) []byte {
	for _, s := range secrets {
		for k := min(len(s)-1, len(head)); k >= minFragment; k-- {
			if string(head[len(head)-k:]) == s[:k] {
				head = head[:len(head)-k]
				break
			}
		}
	}
	return head
}

// requestSecrets are the values of the sensitive headers of a request
// (secret.SensitiveName), and of each the part after an authorization scheme
// ("Bearer xyz": xyz), for cutSecret.
func requestSecrets(h http.Header) []string {
	var secrets []string
	for name, values := range h {
		if !secret.SensitiveName(name) {
			continue
		}
		for _, v := range values {
			secrets = append(secrets, v)
			if _, rest, ok := strings.Cut(v, " "); ok {
				secrets = append(secrets, strings.TrimSpace(rest))
			}
		}
	}
	return secrets
}

// oneLine is b as one printable line: every run of white space and
// control characters becomes one space. It is "" when b is not text (not
// UTF-8, or with a NUL), save a rune cut at its end.
func oneLine(b []byte) string {
	// A rune cut at the end: drop it. Equivalent mutants: i < UTFMax (a
	// start UTFMax bytes back begins a whole rune, or b is not UTF-8) and
	// i < len(b) (a b that is one cut rune reads "" dropped or invalid).
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if start := len(b) - i; utf8.RuneStart(b[start]) {
			if !utf8.FullRune(b[start:]) {
				b = b[:start]
			}
			break
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return ""
	}
	var sb strings.Builder
	space := false
	for _, r := range string(b) {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = true
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteRune(r)
	}
	return sb.String()
}
