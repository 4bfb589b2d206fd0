// Package openaidriver sends requests to an OpenAI-compatible API (chat
// completions, completions, embeddings), whole or streamed as server-sent
// events, one prompt per operation, and reports what happened as a
// driver.Result plus the token figures only it can see (Stats, Facts).
//
// What a Result holds, exactly:
//
//   - TTFB: from the start of Do to the first byte of the response (its
//     status line), as for the other HTTP-based drivers. Set on successful
//     operations only, so that refusals answered at once do not bend the
//     distribution.
//   - Measures, the timings on successful streams only (a whole answer
//     shows no token before it ends, so it has none), each from the start
//     of Do like TTFB, not from the intended start:
//     stats.TTFT, the time to first token: to the first event that carries
//     content (delta.content, delta.reasoning or reasoning_content, or a
//     completion's text); the status line, headers and a role-only first
//     chunk do not count; none when a stream carried no content.
//     stats.TTST, the time to second token as AIPerf defines it: from the
//     first content event to the second.
//     stats.ITL, the inter-token latency: one value per gap between two
//     consecutive content events, as vLLM's benchmark counts it; a server
//     that sends several tokens per event makes it the inter-event latency.
//     stats.TPOT, the time per output token: (end of the stream − first
//     content event) / (output tokens − 1), one value per stream of two
//     output tokens or more, where the end is when "data: [DONE]" was read;
//     1/TPOT is the stream's own rate in tokens/s.
//     stats.NTPOT, on every successful request with output tokens,
//     streamed or not: the time from the start of Do to the end of the
//     answer / its output tokens, as GuideLLM and inference-perf define
//     it.
//     And on every successful operation the lengths: stats.PromptLength,
//     the prompt tokens, and stats.OutputLength, the output tokens (the
//     counters below), one value each when not 0.
//   - Counters, on successful operations: stats.PromptTokens, the usage's
//     prompt_tokens; stats.OutputTokens, the usage's completion_tokens when
//     the answer reports usage (streams ask for it with
//     stream_options.include_usage), else one per content event. With
//     Config.Goodput, on every operation, failed ones too:
//     stats.GoodputJudged 1, and stats.Goodput 1 when it succeeded and met
//     every bound (see Goodput).
//   - Connect: TCP connect time of a connection opened for this request; 0
//     when one was reused. (The TLS handshake, done by net/http, is not
//     included.)
//   - BytesSent: request body bytes. BytesRecv: response body bytes read,
//     every event of a stream included. Headers and framing are not counted.
//   - Class: stats.OK for a 2xx answer that parses (a JSON answer with
//     choices, or data for embeddings; a stream of valid JSON chunks ended by
//     "data: [DONE]"). HTTP 429 is stats.RateLimited, other 4xx
//     stats.Status4xx, 5xx stats.Status5xx, with the API's error message
//     after the status in Message, or, for a body of another shape (a
//     gateway's own), its text on one line, cut to maxExcerpt bytes. A 3xx, an answer that does not parse, a
//     stream that is not text/event-stream, carries an "error" object or
//     ends without [DONE] are stats.Protocol; transport errors are classed
//     by dial.Classify.
//
// Stats and Facts add up the counters over the whole run.
//
// Requests: each prompt's body is built once and the prompts are sent in
// turn; with input_tokens or output_tokens each request is made from the
// seed and its index instead (see requests), so that a seed sends the same
// requests again.
//
// Connections: one net/http client shared by the VUs, keep-alive, HTTP/1.1
// or HTTP/2 by ALPN over https, no cap on connections; the body of every
// answer is read to the end so its connection is reused.
package openaidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Closer    = (*Driver)(nil)
	_ driver.Describer = (*Driver)(nil)
	_ driver.Thinker   = (*Driver)(nil)
	_ driver.Timed     = (*Driver)(nil)
	_ driver.Sharder   = (*Driver)(nil)
)

// Limits on what a Driver reads of one answer.
const (
	maxAnswer     = 64 << 20          // a whole answer
	maxErrorBody  = 64 << 10          // an error answer, read for its message
	maxMessage    = driver.MaxMessage // Result.Message
	readerBufSize = 32 << 10          // buffer of a stream reader
)

// Driver sends one request per Do, cycling through the prompts. It is safe
// for concurrent use by many VUs.
type Driver struct {
	cfg     Config // with defaults
	url     *url.URL
	header  http.Header // shared by every request: net/http does not modify it
	host    string
	reqs    *requests
	convs   *conversations // nil: every request stands alone
	shard   struct{ index, of uint64 }
	seed    int64 // the seed the requests are drawn with
	next    atomic.Uint64
	rt      *http.Transport
	tally   tally
	readers sync.Pool // *bufio.Reader for streams
	buffers sync.Pool // *bytes.Buffer for whole answers
}

// New validates c, reads its prompts and builds a Driver.
func New(c Config) (*Driver, error) {
	in, errs := c.check()
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid openai driver config: %w", errors.Join(errs...))
	}
	c = c.withDefaults()
	u, err := endpointURL(c.URL, c.Endpoint)
	if err != nil {
		return nil, err
	}
	seed := c.Seed
	for seed == 0 {
		seed = rand.Int64()
	}
	reqs, err := newRequests(c, in, seed)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: c, url: u, reqs: reqs, seed: seed, rt: newTransport(c.Timeout), convs: newConversations(c.Conversation)}
	d.shard.of = 1
	d.header, d.host = buildHeader(c)
	return d, nil
}

// Shard implements driver.Sharder: worker index of a distributed run
// sends the requests the engine's shard of the schedule would, its k-th
// request the whole run's k × of + index (a trace's line of that
// arrival; the seed's request of that index).
func (d *Driver) Shard(index, of int) error {
	if index < 0 || of < 1 || index >= of {
		return fmt.Errorf("cannot shard: worker %d of %d", index, of)
	}
	d.shard.index, d.shard.of = uint64(index), uint64(of)
	return nil
}

// Arrivals implements driver.Timed: a replayed trace's arrival times;
// nil without a trace.
func (d *Driver) Arrivals() []time.Duration {
	if d.reqs.trace == nil {
		return nil
	}
	return d.reqs.trace.Arrivals()
}

// Close closes the idle connections. Call it after the last Do returned.
func (d *Driver) Close() error {
	d.rt.CloseIdleConnections()
	return nil
}

// exchange is what the trace of one request records.
type exchange struct {
	start     time.Time
	reply     *strings.Builder // collects the answer's content; nil: not kept
	connect   atomic.Int64     // ns: dial time of a new connection
	firstByte atomic.Int64     // ns after start; 0 if none yet
}

func (x *exchange) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if c := dial.ClaimConnect(info.Conn); c > 0 {
				x.connect.Store(int64(c))
			}
		},
		GotFirstResponseByte: func() { x.firstByte.CompareAndSwap(0, int64(max(time.Since(x.start), 1))) },
	}
}

// Do sends the next prompt and fills in r. A ctx done before or during the
// request is stats.Interrupted; the driver's own timeout is stats.Timeout.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	i := (d.next.Add(1)-1)*d.shard.of + d.shard.index
	if d.convs != nil {
		d.doTurn(ctx, vu, i, r)
		return
	}
	r.Reset(d.cfg.Name)
	body, err := d.reqs.body(i)
	d.send(ctx, body, err, &exchange{}, r)
}

// doTurn sends request i as the next turn of vu's conversation, keeping
// the answer for the turns after it.
func (d *Driver) doTurn(ctx context.Context, vu int, i uint64, r *driver.Result) {
	body, t, err := d.reqs.turn(d.convs, vu, i)
	r.Reset(turnOp(d.cfg.Name, t.index))
	x := &exchange{reply: &strings.Builder{}}
	d.send(ctx, body, err, x, r)
	d.convs.finish(vu, t, r.Class == stats.OK, x.reply.String())
}

// send sends body (or fails with err, from making it) and fills in r.
func (d *Driver) send(ctx context.Context, body []byte, err error, x *exchange, r *driver.Result) {
	if d.cfg.Goodput != nil {
		r.Counters[stats.GoodputJudged] = 1
		d.tally.judged.Add(1)
	}
	if err != nil { // cannot happen: New encoded a request made the same way
		r.Class, r.Message = stats.Protocol, truncate("cannot encode request: "+err.Error())
		return
	}
	r.BytesSent = int64(len(body))
	x.start = time.Now()
	rctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req := &http.Request{
		Method: http.MethodPost, URL: d.url, Host: d.host, Header: d.header,
		Body: &bodyReader{b: body}, ContentLength: int64(len(body)),
		GetBody: func() (io.ReadCloser, error) { return &bodyReader{b: body}, nil },
	}
	req = req.WithContext(httptrace.WithClientTrace(rctx, x.trace()))
	resp, err := d.rt.RoundTrip(req)
	r.Connect = time.Duration(x.connect.Load())
	if err != nil {
		r.Class, r.Message = d.classify(err, ctx, rctx)
		return
	}
	defer resp.Body.Close()
	body2 := &countingReader{r: resp.Body}
	defer func() { r.BytesRecv = body2.n }()
	switch {
	case resp.StatusCode >= 400:
		r.Class, r.Message = d.refused(resp, body2)
	case resp.StatusCode >= 300 || resp.StatusCode < 200:
		r.Class, r.Message = stats.Protocol, "HTTP "+resp.Status+": want 2xx (redirects are not followed)"
	case d.cfg.Stream:
		d.judge(x, d.readStream(ctx, rctx, x, resp, body2, r), r)
	default:
		d.readWhole(ctx, rctx, x, body2, r)
		d.judge(x, figures{}, r)
	}
}

// answer is what a whole answer must hold to count as one.
type answer struct {
	Choices []json.RawMessage `json:"choices"`
	Data    []json.RawMessage `json:"data"`
	Usage   *usage            `json:"usage"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// readWhole reads and checks a whole (non-streamed) answer.
func (d *Driver) readWhole(ctx, rctx context.Context, x *exchange, body io.Reader, r *driver.Result) {
	buf, _ := d.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() { buf.Reset(); d.buffers.Put(buf) }()
	if _, err := buf.ReadFrom(io.LimitReader(body, maxAnswer+1)); err != nil {
		r.Class, r.Message = d.classifyBody(err, ctx, rctx)
		return
	}
	if buf.Len() > maxAnswer {
		r.Class, r.Message = stats.Protocol, "answer larger than "+strconv.Itoa(maxAnswer>>20)+" MiB"
		return
	}
	var a answer
	if err := json.Unmarshal(buf.Bytes(), &a); err != nil {
		r.Class, r.Message = stats.Protocol, truncate("cannot parse answer: "+err.Error())
		return
	}
	if d.cfg.Endpoint == EndpointEmbeddings && len(a.Data) == 0 {
		r.Class, r.Message = stats.Protocol, "answer has no data"
		return
	}
	if d.cfg.Endpoint != EndpointEmbeddings && len(a.Choices) == 0 {
		r.Class, r.Message = stats.Protocol, "answer has no choices"
		return
	}
	if x.reply != nil {
		x.reply.WriteString(choiceContent(a.Choices[0]))
	}
	d.succeeded(x, r, a.Usage, 0)
}

// choiceContent is the text of a whole answer's choice: its message's
// content (chat) or its text (completions).
func choiceContent(raw json.RawMessage) string {
	var c struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &c) // a choice that does not parse has none
	return c.Message.Content + c.Text
}

// succeeded fills in what a successful operation adds to r (its TTFB,
// token counters and lengths) and counts it: output tokens are the usage's
// when the answer reported usage, else the stream's content events.
func (d *Driver) succeeded(x *exchange, r *driver.Result, u *usage, events int64) {
	r.TTFB = time.Duration(x.firstByte.Load())
	r.Counters[stats.OutputTokens] = events
	if u != nil {
		r.Counters[stats.PromptTokens] = u.PromptTokens
		r.Counters[stats.OutputTokens] = u.CompletionTokens
	}
	for _, l := range []struct {
		m stats.Measure
		n int64
	}{{stats.PromptLength, r.Counters[stats.PromptTokens]}, {stats.OutputLength, r.Counters[stats.OutputTokens]}} {
		if l.n > 0 {
			r.Measures = append(r.Measures, stats.LengthTiming(l.m, l.n))
		}
	}
	d.tally.add(r, u != nil)
}

// refused reads an error answer for its message and classes it.
func (d *Driver) refused(resp *http.Response, body io.Reader) (stats.Class, string) {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	_, _ = io.Copy(io.Discard, body) // to the end, so the connection is reused
	msg := "HTTP " + resp.Status
	if m := apiErrorMessage(b); m != "" {
		msg += ": " + m
	} else if e := bodyExcerpt(b); e != "" {
		msg += ": " + e // a gateway's own shape, e.g. {"status":"failure",...}: kept as it came
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return stats.RateLimited, truncate(msg)
	case resp.StatusCode >= 500:
		return stats.Status5xx, truncate(msg)
	}
	return stats.Status4xx, truncate(msg)
}

// apiErrorMessage is the message of an OpenAI error body
// ({"error": {"message": ...}}, or {"error": "..."}), or "".
func apiErrorMessage(b []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) != nil || len(v.Error) == 0 {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(v.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	_ = json.Unmarshal(v.Error, &s)
	return s
}

// maxExcerpt bounds the part of an error body that is not the OpenAI
// shape kept in the message.
const maxExcerpt = 300

// bodyExcerpt is an error body's text on one line, cut to maxExcerpt
// bytes; "" when it is empty or not UTF-8 text.
func bodyExcerpt(b []byte) string {
	if !utf8.Valid(b) {
		return ""
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// classify is dial.Classify plus the timeout's length in the message.
func (d *Driver) classify(err error, parent, rctx context.Context) (stats.Class, string) {
	class, msg := dial.Classify(err, parent)
	if class == stats.Timeout && errors.Is(rctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		msg = fmt.Sprintf("request timed out after %v", d.cfg.Timeout)
	}
	return class, truncate(msg)
}

// classifyBody classes an error met while reading an answer: a connection
// that broke after the answer began is a protocol failure.
func (d *Driver) classifyBody(err error, parent, rctx context.Context) (stats.Class, string) {
	class, msg := d.classify(err, parent, rctx)
	return dial.BodyClass(class), msg
}

func truncate(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage-3] + "..."
	}
	return s
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
