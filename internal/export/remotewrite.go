package export

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
)

// userAgent is what perflab's pushes say they come from.
const userAgent = "perflab-export"

// remoteWrite pushes to a Prometheus remote write 1.0 receiver.
type remoteWrite struct {
	url    string
	header http.Header
	native bool // send native histograms
	client *http.Client
}

func newRemoteWrite(t Target) *remoteWrite {
	return &remoteWrite{url: t.URL, header: t.Header, native: t.NativeHistograms, client: newHTTPClient()}
}

// newHTTPClient is a client of its own: the pushes share no connection
// with the load.
func newHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2
	return &http.Client{Transport: tr}
}

func (r *remoteWrite) send(ctx context.Context, batch []Series) error {
	body, err := encodeRemoteWrite(batch, r.native)
	if err != nil {
		return err
	}
	req, err := newPost(ctx, r.url, r.header, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	_, err = do(r.client, req)
	return err
}

func (r *remoteWrite) close() { r.client.CloseIdleConnections() }

// do sends req and returns the start of the answer (64 KiB), or says
// what went wrong: the transport's error, or a status other than 2xx with
// the start of the answer.
func do(c *http.Client, req *http.Request) ([]byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return msg, nil
	}
	text := strings.Join(strings.Fields(string(msg)), " ")
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return nil, fmt.Errorf("HTTP %s: %s", resp.Status, text)
}

// encodeRemoteWrite is a batch as a snappy-compressed WriteRequest: a
// summary becomes its quantiles (label quantile), _sum and _count; a
// native histogram is sent only when native is set. The samples of each
// series are in time order, labels sorted by name.
func encodeRemoteWrite(batch []Series, native bool) ([]byte, error) {
	w := rwBuilder{at: map[string]int{}}
	for _, s := range batch {
		ms := s.Time.UnixMilli()
		switch s.kind {
		case summary:
			for _, q := range s.Quantiles {
				w.sample(s.Name, s.Labels, &prompb.Label{Name: "quantile", Value: strconv.FormatFloat(q.Q, 'g', -1, 64)}, ms, q.V)
			}
			w.sample(s.Name+"_sum", s.Labels, nil, ms, s.Sum)
			w.sample(s.Name+"_count", s.Labels, nil, ms, float64(s.Count))
		case nativeHist:
			if native {
				i := w.series(s.Name, s.Labels, nil)
				w.req.Timeseries[i].Histograms = append(w.req.Timeseries[i].Histograms, prompb.FromIntHistogram(ms, s.Native))
			}
		default:
			w.sample(s.Name, s.Labels, nil, ms, s.Value)
		}
	}
	for i := range w.req.Timeseries {
		ts := &w.req.Timeseries[i]
		slices.SortStableFunc(ts.Samples, func(a, b prompb.Sample) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
		slices.SortStableFunc(ts.Histograms, func(a, b prompb.Histogram) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	}
	pb, err := w.req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("cannot marshal the write request: %w", err)
	}
	return s2.EncodeSnappy(nil, pb), nil
}

// rwBuilder gathers a WriteRequest's series, each once.
type rwBuilder struct {
	req prompb.WriteRequest
	at  map[string]int // label key → index in req.Timeseries
}

// series is the index of the series of name and labels (and extra).
func (w *rwBuilder) series(name string, ls []Label, extra *prompb.Label) int {
	pl := make([]prompb.Label, 0, len(ls)+2)
	pl = append(pl, prompb.Label{Name: "__name__", Value: name})
	for _, l := range ls {
		pl = append(pl, prompb.Label{Name: l.Name, Value: l.Value})
	}
	if extra != nil {
		pl = append(pl, *extra)
	}
	slices.SortFunc(pl, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	k := labelKey(pl)
	i, ok := w.at[k]
	if !ok {
		i = len(w.req.Timeseries)
		w.at[k] = i
		w.req.Timeseries = append(w.req.Timeseries, prompb.TimeSeries{Labels: pl})
	}
	return i
}

func (w *rwBuilder) sample(name string, ls []Label, extra *prompb.Label, ms int64, v float64) {
	i := w.series(name, ls, extra)
	w.req.Timeseries[i].Samples = append(w.req.Timeseries[i].Samples, prompb.Sample{Timestamp: ms, Value: v})
}

func labelKey(ls []prompb.Label) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Name)
		b.WriteByte(0)
		b.WriteString(l.Value)
		b.WriteByte(0)
	}
	return b.String()
}

// newPost makes a POST of a protobuf body to url with the target's
// headers and perflab's user agent.
func newPost(ctx context.Context, url string, header http.Header, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}
