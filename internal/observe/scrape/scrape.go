// Package scrape samples a component's own Prometheus /metrics endpoint:
// the Go heap in use, goroutines, resident memory, and the rates of CPU
// seconds and GC cycles, plus any metric the plan names.
//
// It asks for the Prometheus text format (text/plain;version=0.0.4), which
// a scanner reads looking only at the families it reports (text.go), and
// also reads the delimited protobuf format when a server answers with it;
// OpenMetrics is not asked for. Rates are taken between the sample times
// the sampler passes in. A counter that went down means the component
// restarted: that sample has no rate, and becomes the baseline of the next.
package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe"
)

// Source metric names the fixed points are read from.
const (
	heapInuse  = "go_memstats_heap_inuse_bytes"
	goroutines = "go_goroutines"
	rss        = "process_resident_memory_bytes"
	cpuSeconds = "process_cpu_seconds_total"
	gcCount    = "go_gc_duration_seconds_count"
)

// accept asks for the classic text format, which every exporter speaks.
const accept = "text/plain;version=0.0.4"

// Scraper is a Source for one /metrics URL.
type Scraper struct {
	url     string
	timeout time.Duration
	extra   []string
	buckets []string      // histograms' _bucket names (bucketPoints)
	format  expfmt.Format // of the last response
	client  *http.Client
	text    *textReader
	body    bytes.Buffer       // the last response, its storage kept for the next
	prev    map[string]float64 // counters at the previous sample
	at      time.Time          // time of the previous sample; zero before the first
}

var _ observe.Source = (*Scraper)(nil)

// New returns a Scraper of url. Each request is bounded by timeout (set it
// to the sample interval or less; zero means only the caller's context
// bounds it). Each name in extra is reported as the sum of the metric's
// series: a counter (TYPE counter, or the count or sum of a summary or
// histogram) as observe.CounterPrefix+name, its raw cumulative value;
// any other as observe.MetricPrefix+name. A name ending in _count or _sum
// also finds the count or sum of a summary or histogram; a name ending in
// _bucket, a histogram's buckets, each as observe.BucketPrefix (see
// BucketMetric) with its raw cumulative count; a summary or histogram
// named by its own name, and a name the endpoint does not expose, are
// left out.
func New(url string, timeout time.Duration, extra []string) *Scraper {
	extra, buckets := splitBuckets(extra)
	want := append([]string{heapInuse, goroutines, rss, cpuSeconds, gcCount}, extra...)
	return &Scraper{url: url, timeout: timeout, extra: extra, buckets: buckets, client: &http.Client{}, text: newTextReader(want)}
}

// Name implements observe.Source.
func (s *Scraper) Name() string { return "scrape " + s.url }

// Sample implements observe.Source: GoHeapInuseBytes, GoGoroutines,
// ProcessRSSBytes, from the second sample on ProcessCPUCores and GCPerMin,
// then the extra metrics, each only if the endpoint exposes it.
func (s *Scraper) Sample(ctx context.Context, now time.Time) ([]observe.Point, error) {
	r, err := s.fetch(ctx)
	if err != nil {
		return nil, err
	}
	get := r.value
	var points []observe.Point
	add := func(metric string, v float64, ok bool) {
		if ok {
			points = append(points, observe.Point{Metric: metric, Value: v})
		}
	}
	for _, g := range []struct{ metric, name string }{
		{observe.GoHeapInuseBytes, heapInuse},
		{observe.GoGoroutines, goroutines},
		{observe.ProcessRSSBytes, rss},
	} {
		v, ok := get(g.name)
		add(g.metric, v, ok)
	}
	cur := map[string]float64{}
	for _, name := range []string{cpuSeconds, gcCount} {
		if v, ok := get(name); ok {
			cur[name] = v
		}
	}
	cpu, ok := s.rate(cur, cpuSeconds, now)
	add(observe.ProcessCPUCores, cpu, ok)
	gc, ok := s.rate(cur, gcCount, now)
	add(observe.GCPerMin, gc*60, ok)
	for _, name := range s.extra {
		v, ok := r.value(name)
		prefix := observe.MetricPrefix
		if r.counter(name) {
			prefix = observe.CounterPrefix
		}
		add(prefix+name, v, ok)
	}
	if len(s.buckets) > 0 {
		b, err := s.bucketPoints(s.format)
		if err != nil {
			return nil, fmt.Errorf("cannot parse the histograms of %s: %w", s.url, err)
		}
		points = append(points, b...)
	}
	s.prev, s.at = cur, now
	return points, nil
}

// rate is the per-second growth of counter name since the previous sample;
// false on the first sample, when the counter is missing or went down.
func (s *Scraper) rate(cur map[string]float64, name string, now time.Time) (float64, bool) {
	v, ok := cur[name]
	p, okPrev := s.prev[name]
	dt := now.Sub(s.at).Seconds()
	if !ok || !okPrev || s.at.IsZero() || dt <= 0 || v < p {
		return 0, false
	}
	return (v - p) / dt, true
}

// reading answers for the metrics of one scrape: a metric's value by name
// (see sum), and whether it is a counter.
type reading interface {
	value(name string) (float64, bool)
	counter(name string) bool
}

// familyReading is the reading of families expfmt parsed.
type familyReading map[string]*dto.MetricFamily

func (f familyReading) value(name string) (float64, bool) { return sum(f, name) }
func (f familyReading) counter(name string) bool          { return isCounter(f, name) }

// fetch GETs and reads the endpoint.
func (s *Scraper) fetch(ctx context.Context) (reading, error) {
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", s.url, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("cannot scrape %s: status %s", s.url, resp.Status)
	}
	s.body.Reset()
	if _, err := s.body.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", s.url, err)
	}
	s.format = expfmt.ResponseFormat(resp.Header)
	r, err := s.parse(s.format)
	if err != nil {
		return nil, fmt.Errorf("cannot parse the metrics of %s (status %s): %w", s.url, resp.Status, err)
	}
	return r, nil
}

// parse reads delimited protobuf when the server says so, else text: with
// the scanner, or expfmt's parser for what the scanner leaves to it.
func (s *Scraper) parse(format expfmt.Format) (reading, error) {
	var families map[string]*dto.MetricFamily
	var err error
	if format.FormatType() == expfmt.TypeProtoDelim {
		families, err = decodeProto(bytes.NewReader(s.body.Bytes()), format)
	} else {
		r, terr := s.text.read(s.body.Bytes())
		if !errors.Is(terr, errFallback) {
			return r, terr
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err = p.TextToMetricFamilies(bytes.NewReader(s.body.Bytes()))
	}
	if err != nil {
		return nil, err
	}
	return familyReading(families), nil
}

// decodeProto reads delimited protobuf families.
func decodeProto(r io.Reader, format expfmt.Format) (map[string]*dto.MetricFamily, error) {
	families := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(r, format)
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return families, nil
		} else if err != nil {
			return nil, err
		}
		families[mf.GetName()] = mf
	}
}

// sum adds up the series of the metric called name: the family of that name
// if it is a counter, gauge or untyped metric, or the count or sum of a
// summary or histogram for a name ending in _count or _sum.
func sum(families map[string]*dto.MetricFamily, name string) (float64, bool) {
	if mf, ok := families[name]; ok {
		if v, ok := sumValues(mf); ok {
			return v, true
		}
	}
	for _, suffix := range []string{"_count", "_sum"} {
		base, ok := strings.CutSuffix(name, suffix)
		if mf, found := families[base]; ok && found {
			return sumDistribution(mf, suffix)
		}
	}
	return 0, false
}

// isCounter reports whether the metric called name only grows: a family
// of TYPE counter, or the count or sum of a summary or histogram.
func isCounter(families map[string]*dto.MetricFamily, name string) bool {
	if mf, ok := families[name]; ok {
		return mf.GetType() == dto.MetricType_COUNTER
	}
	for _, suffix := range []string{"_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] != nil {
			t := families[base].GetType()
			return t == dto.MetricType_SUMMARY || t == dto.MetricType_HISTOGRAM
		}
	}
	return false
}

func sumValues(mf *dto.MetricFamily) (float64, bool) {
	var total float64
	for _, m := range mf.GetMetric() {
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			total += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			total += m.GetGauge().GetValue()
		case dto.MetricType_UNTYPED:
			total += m.GetUntyped().GetValue()
		default:
			return 0, false
		}
	}
	return total, true
}

func sumDistribution(mf *dto.MetricFamily, suffix string) (float64, bool) {
	var total float64
	for _, m := range mf.GetMetric() {
		switch {
		case mf.GetType() == dto.MetricType_SUMMARY && suffix == "_count":
			total += float64(m.GetSummary().GetSampleCount())
		case mf.GetType() == dto.MetricType_SUMMARY:
			total += m.GetSummary().GetSampleSum()
		case mf.GetType() == dto.MetricType_HISTOGRAM && suffix == "_count":
			total += float64(m.GetHistogram().GetSampleCount())
		case mf.GetType() == dto.MetricType_HISTOGRAM:
			total += m.GetHistogram().GetSampleSum()
		default:
			return 0, false
		}
	}
	return total, true
}
