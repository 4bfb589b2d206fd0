package openaidriver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// maxEvent bounds the data of one server-sent event.
const maxEvent = 16 << 20

// errNoDone ends a stream that closed before "data: [DONE]".
var errNoDone = errors.New("stream ended without data: [DONE]")

// protocolError is a stream that does not follow the protocol; Do classes
// it stats.Protocol, with its text as the message.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// streamChunk is what the driver reads of one event of a stream.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			Reasoning        string `json:"reasoning"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		Text string `json:"text"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// hasContent reports whether the chunk carries at least one token.
func (c *streamChunk) hasContent() bool {
	for _, ch := range c.Choices {
		if ch.Delta.Content != "" || ch.Delta.Reasoning != "" || ch.Delta.ReasoningContent != "" || ch.Text != "" {
			return true
		}
	}
	return false
}

// streamState follows one stream: when its content events came, each gap
// between them appended to the Result's measures as it is seen, and the
// usage it reported.
type streamState struct {
	r      *driver.Result
	reply  *strings.Builder // collects the content; nil: not kept
	first  time.Time        // first content event; zero if none yet
	last   time.Time
	done   time.Time // when [DONE] was read
	events int64
	usage  *usage
}

// onData handles the data of one event, and reports whether it was the
// final "[DONE]".
func (s *streamState) onData(data []byte) (bool, error) {
	now := time.Now()
	if string(data) == "[DONE]" {
		s.done = now
		return true, nil
	}
	var c streamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return false, &protocolError{"cannot parse stream chunk: " + err.Error()}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		msg := apiErrorMessage(append(append([]byte(`{"error":`), c.Error...), '}'))
		return false, &protocolError{"error in stream: " + msg}
	}
	if c.hasContent() {
		switch {
		case s.first.IsZero():
			s.first = now
		case s.events == 1:
			s.r.Measures = append(s.r.Measures, stats.Timing{Measure: stats.TTST, D: now.Sub(s.first)})
			fallthrough
		default:
			s.r.Measures = append(s.r.Measures, stats.Timing{Measure: stats.ITL, D: now.Sub(s.last)})
		}
		s.last = now
		s.events++
	}
	if s.reply != nil {
		for _, ch := range c.Choices {
			s.reply.WriteString(ch.Delta.Content + ch.Text)
		}
	}
	if c.Usage != nil {
		s.usage = c.Usage
	}
	return false, nil
}

// readStream reads a streamed answer to its end, fills in r and returns
// the request's figures for goodput.
func (d *Driver) readStream(ctx, rctx context.Context, x *exchange, resp *http.Response, body io.Reader, r *driver.Result) figures {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		r.Class, r.Message = stats.Protocol, truncate(fmt.Sprintf("stream asked for, got Content-Type %q", resp.Header.Get("Content-Type")))
		return figures{}
	}
	br, _ := d.readers.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(body, readerBufSize)
	} else {
		br.Reset(body)
	}
	defer func() { br.Reset(nil); d.readers.Put(br) }()
	st := &streamState{r: r, reply: x.reply}
	err := readEvents(br, st.onData)
	if err == nil {
		_, err = io.Copy(io.Discard, br) // to the end, so the connection is reused
	}
	var pe *protocolError
	switch {
	case errors.As(err, &pe):
		r.Class, r.Message = stats.Protocol, truncate(pe.msg)
	case err != nil:
		r.Class, r.Message = d.classifyBody(err, ctx, rctx)
	}
	if err != nil {
		r.Measures = r.Measures[:0] // a failed stream's gaps are not data
		return figures{}
	}
	d.succeeded(x, r, st.usage, st.events)
	if st.first.IsZero() {
		return figures{}
	}
	f := figures{ttft: st.first.Sub(x.start), hasTTFT: true}
	r.Measures = append(r.Measures, stats.Timing{Measure: stats.TTFT, D: f.ttft})
	if n := r.Counters[stats.OutputTokens]; n > 1 {
		f.tpot = st.done.Sub(st.first) / time.Duration(n-1)
		r.Measures = append(r.Measures, stats.Timing{Measure: stats.TPOT, D: f.tpot})
	}
	if st.events > 1 {
		f.itl, f.hasSteps = st.last.Sub(st.first)/time.Duration(st.events-1), true
	}
	return f
}

// readEvents reads server-sent events from br and calls onData with the
// data of each (data lines joined by "\n"; comments, event, id and retry
// fields ignored), until onData reports the end or fails. A stream that
// ends first returns a protocolError wrapping errNoDone; a read error is
// returned as it is. Lines end in "\n" or "\r\n".
func readEvents(br *bufio.Reader, onData func([]byte) (bool, error)) error {
	var data []byte
	pending := false
	for {
		line, err := readLine(br)
		if err == io.EOF {
			if pending { // the last event lacked its blank line: take it anyway
				if done, err := onData(data); done || err != nil {
					return err
				}
			}
			return &protocolError{errNoDone.Error()}
		}
		if err != nil {
			return err
		}
		switch {
		case len(line) == 0:
			if !pending {
				continue
			}
			if done, err := onData(data); done || err != nil {
				return err
			}
			data, pending = data[:0], false
		case line[0] == ':': // comment, e.g. a keep-alive ": ping"
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			if string(field) != "data" {
				continue
			}
			if pending {
				data = append(data, '\n')
			}
			data, pending = append(data, bytes.TrimPrefix(value, []byte(" "))...), true
			if len(data) > maxEvent {
				return &protocolError{fmt.Sprintf("stream event larger than %d MiB", maxEvent>>20)}
			}
		}
	}
}

// readLine returns the next line without its terminator. The returned
// slice is valid until the next read. A last line without a terminator is
// returned with a nil error; io.EOF comes after it.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxEvent {
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &protocolError{fmt.Sprintf("stream line longer than %d MiB", maxEvent>>20)}
		}
		line = long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
