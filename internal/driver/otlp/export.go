package otlpdriver

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/stats"
)

// maxMessage bounds Result.Message.
const maxMessage = driver.MaxMessage

// maxReply bounds the response body read: an export response is a few
// bytes; an error page may be more, and only its start is kept.
const maxReply = 64 << 10

// reply is what an export came back with.
type reply struct {
	class    stats.Class
	msg      string
	rejected int64 // partial_success.rejected_spans
	partial  string
	recv     int64
	ttfb     time.Duration
}

// exporter sends one encoded ExportTraceServiceRequest.
type exporter interface {
	export(ctx context.Context, vu int, st *ingestState) reply
	close()
}

// httpExporter posts requests to an OTLP/HTTP endpoint.
type httpExporter struct {
	url     string
	header  http.Header // read-only once built
	client  *http.Client
	rt      *http.Transport
	timeout time.Duration
}

// tracesURL is endpoint with the path /v1/traces when it has none.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

func newHTTPExporter(c Config, tlsConf *tls.Config) *httpExporter {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/x-protobuf")
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", dial.UserAgent)
	}
	rt := newTransport(tlsConf)
	return &httpExporter{url: tracesURL(c.Endpoint), header: h, rt: rt,
		client: &http.Client{Transport: rt}, timeout: c.Timeout}
}

// newTransport is a net/http transport for many concurrent VUs on one
// host: a keep-alive connection per VU, no proxy, no compression.
func newTransport(tlsConf *tls.Config) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConf,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

func (h *httpExporter) close() { h.rt.CloseIdleConnections() }

// body is a request body that says when net/http is done with it: the
// transport may read the body after Do returned (a server that answers
// before reading it all), so the buffer is reused only once it is closed.
type body struct {
	bytes.Reader
	closed atomic.Bool
}

func (b *body) Close() error {
	b.closed.Store(true)
	return nil
}

func (h *httpExporter) export(parent context.Context, _ int, st *ingestState) reply {
	ctx, cancel := context.WithTimeout(parent, h.timeout)
	defer cancel()
	b := &body{}
	b.Reset(st.buf)
	st.lent = b
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, b)
	if err != nil {
		return reply{class: stats.Protocol, msg: trim(err.Error())}
	}
	req.Header = h.header
	req.ContentLength = int64(len(st.buf))
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		class, msg := dial.Classify(err, parent)
		return reply{class: class, msg: msg}
	}
	defer resp.Body.Close()
	r := reply{ttfb: time.Since(start)}
	data, err := readReply(resp.Body, st)
	r.recv = int64(len(data))
	if err != nil {
		r.class, r.msg = dial.Classify(err, parent)
		r.class = dial.BodyClass(r.class)
		return r
	}
	if resp.StatusCode/100 != 2 {
		r.class, r.msg = statusClass(resp.StatusCode), statusMessage(resp, data)
		return r
	}
	r.rejected, r.partial, err = decodeResponse(resp.Header.Get("Content-Type"), data, &st.resp)
	if err != nil {
		r.class, r.msg = stats.Protocol, trim("cannot decode export response: "+err.Error())
	}
	return r
}

// readReply reads up to maxReply bytes of body into st's buffer and drains
// the rest, so the connection can be reused.
func readReply(r io.Reader, st *ingestState) ([]byte, error) {
	buf := bytes.NewBuffer(st.reply[:0])
	_, err := buf.ReadFrom(io.LimitReader(r, maxReply))
	if err == nil {
		_, err = io.Copy(io.Discard, r)
	}
	st.reply = buf.Bytes()
	return st.reply, err
}

// decodeResponse reads an ExportTraceServiceResponse, protobuf or JSON,
// into resp and returns its partial success.
func decodeResponse(contentType string, data []byte, resp *coltracepb.ExportTraceServiceResponse) (int64, string, error) {
	proto.Reset(resp)
	var err error
	if strings.Contains(contentType, "json") {
		err = protojson.Unmarshal(data, resp)
	} else {
		err = proto.Unmarshal(data, resp)
	}
	ps := resp.GetPartialSuccess()
	return ps.GetRejectedSpans(), ps.GetErrorMessage(), err
}

// statusClass classes an HTTP status that is not 2xx.
func statusClass(code int) stats.Class {
	switch {
	case code == http.StatusTooManyRequests:
		return stats.RateLimited
	case code >= 400 && code < 500:
		return stats.Status4xx
	case code >= 500 && code < 600:
		return stats.Status5xx
	}
	return stats.Protocol // 1xx, 3xx: not an answer to an export or a query
}

// statusMessage is "HTTP 503 Service Unavailable: <why>", the reason from
// a google.rpc.Status body (OTLP/HTTP's error body) or the body's start.
func statusMessage(resp *http.Response, data []byte) string {
	msg := "HTTP " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	why := ""
	if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "protobuf") {
		var s spb.Status
		if proto.Unmarshal(data, &s) == nil {
			why = s.GetMessage()
		}
	} else {
		why = strings.Join(strings.Fields(string(data[:min(len(data), maxMessage)])), " ")
	}
	if why != "" {
		msg += ": " + why
	}
	return trim(msg)
}

func trim(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage-3] + "..."
	}
	return s
}

// tlsConfig builds the TLS client config of c, or nil for the defaults.
func tlsConfig(c Config) (*tls.Config, error) {
	if c.CAFile == "" && !c.Insecure {
		return nil, nil
	}
	conf := &tls.Config{InsecureSkipVerify: c.Insecure} //nolint:gosec // only when asked
	if c.CAFile != "" {
		pool, err := dial.LoadCA(c.CAFile)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// describeReply is the message of a partial success.
func describeReply(rejected int64, why string) string {
	msg := fmt.Sprintf("partial success: %d spans rejected", rejected)
	if why != "" {
		msg += ": " + why
	}
	return trim(msg)
}
