package remotewrite

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	promhist "github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// sink is a decoding remote write receiver of either version: it decodes
// every body by its Content-Type, counts what it holds, keeps each
// series as text, and answers as a 2.0 receiver does (written headers),
// or as a 1.0 receiver (no headers; 415 to 2.0 when refuse2).
type sink struct {
	t        *testing.T
	refuse2  bool // a 1.0 receiver that checks the Content-Type
	bare     bool // no written headers (a 1.0 receiver)
	lose     int  // say this many samples fewer were written, per request
	loseHist int  // … and histograms

	mu        sync.Mutex
	got       counts
	v1, v2    int      // requests decoded of each version
	refused   int      // 2.0 requests answered 415
	series    []string // "labels value @ts", in arrival order
	hists     []string // "labels histogram @ts", in arrival order
	exemplars []string // "labels exemplar-labels value @ts", in arrival order
	lastHist  map[string]*promhist.Histogram
	helpless  int // 2.0 series without a help text or type
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := snappy.Decode(nil, must(io.ReadAll(r.Body)))
	if err != nil {
		s.t.Errorf("cannot decode snappy: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var c counts
	switch ct := r.Header.Get("Content-Type"); ct {
	case contentType2:
		if s.refuse2 {
			s.refused++
			http.Error(w, "unsupported proto", http.StatusUnsupportedMediaType)
			return
		}
		if v := r.Header.Get("X-Prometheus-Remote-Write-Version"); v != "2.0.0" {
			s.t.Errorf("2.0 request with version header %q", v)
		}
		s.v2++
		c = s.decode2(raw)
	case contentType1:
		s.v1++
		c = s.decode1(raw)
	default:
		s.t.Errorf("Content-Type %q", ct)
	}
	s.got.add(c)
	if !s.bare {
		w.Header().Set(hdrSamplesWritten, strconv.FormatInt(max(c.samples-int64(s.lose), 0), 10))
		w.Header().Set(hdrHistogramsWritten, strconv.FormatInt(max(c.histograms-int64(s.loseHist), 0), 10))
		w.Header().Set(hdrExemplarsWritten, strconv.FormatInt(c.exemplars, 10))
	}
	w.WriteHeader(http.StatusNoContent)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func (s *sink) decode2(raw []byte) counts {
	var req writev2.Request
	if err := req.Unmarshal(raw); err != nil {
		s.t.Errorf("cannot unmarshal io.prometheus.write.v2.Request: %v", err)
		return counts{}
	}
	if len(req.Symbols) == 0 || req.Symbols[0] != "" {
		s.t.Errorf("symbol table does not start with the empty string: %q", req.Symbols[:min(3, len(req.Symbols))])
	}
	var c counts
	var b labels.ScratchBuilder
	for _, ts := range req.Timeseries {
		ls, err := ts.ToLabels(&b, req.Symbols)
		if err != nil {
			s.t.Errorf("cannot read labels: %v", err)
			continue
		}
		md, err := ts.ToMetadata(req.Symbols)
		if err != nil || md.Help == "" || ts.Metadata.Type == writev2.Metadata_METRIC_TYPE_UNSPECIFIED {
			s.helpless++
		}
		for _, smp := range ts.Samples {
			s.series = append(s.series, fmt.Sprintf("%s %v @%d", ls, smp.Value, smp.Timestamp))
		}
		for _, h := range ts.Histograms {
			s.histogram(ls, h.ToIntHistogram(), h.Timestamp)
		}
		for _, ex := range ts.Exemplars {
			e, err := ex.ToExemplar(&b, req.Symbols)
			if err != nil {
				s.t.Errorf("cannot read exemplar: %v", err)
			}
			s.exemplars = append(s.exemplars, fmt.Sprintf("%s %s %v @%d", ls, e.Labels, e.Value, e.Ts))
		}
		c.add(counts{samples: int64(len(ts.Samples)), histograms: int64(len(ts.Histograms)), exemplars: int64(len(ts.Exemplars))})
	}
	return c
}

// histogram records a native histogram, after checking that it is
// valid (its count is its buckets') and that no bucket of its series
// went down since the last one (a reset, to Prometheus).
func (s *sink) histogram(ls labels.Labels, h *promhist.Histogram, ts int64) {
	if err := h.Validate(); err != nil {
		s.t.Errorf("%s: invalid histogram: %v", ls, err)
	}
	if s.lastHist == nil {
		s.lastHist = map[string]*promhist.Histogram{}
	}
	if prev := s.lastHist[ls.String()]; prev != nil && h.ToFloat(nil).DetectReset(prev.ToFloat(nil)) {
		s.t.Errorf("%s: histogram went down: %s after %s", ls, h, prev)
	}
	s.lastHist[ls.String()] = h
	s.hists = append(s.hists, fmt.Sprintf("%s %s @%d", ls, h, ts))
}

func (s *sink) decode1(raw []byte) counts {
	req := decode(s.t, must(snappy.Encode(nil, raw), nil))
	var c counts
	for _, ts := range req.Timeseries {
		var b labels.ScratchBuilder
		for _, l := range ts.Labels {
			b.Add(l.Name, l.Value)
		}
		ls := b.Labels()
		for _, smp := range ts.Samples {
			s.series = append(s.series, fmt.Sprintf("%s %v @%d", ls, smp.Value, smp.Timestamp))
		}
		for _, h := range ts.Histograms {
			s.histogram(ls, h.ToIntHistogram(), h.Timestamp)
		}
		for _, ex := range ts.Exemplars {
			var eb labels.ScratchBuilder
			for _, l := range ex.Labels {
				eb.Add(l.Name, l.Value)
			}
			s.exemplars = append(s.exemplars, fmt.Sprintf("%s %s %v @%d", ls, eb.Labels(), ex.Value, ex.Timestamp))
		}
		c.add(counts{samples: int64(len(ts.Samples)), histograms: int64(len(ts.Histograms)), exemplars: int64(len(ts.Exemplars))})
	}
	return c
}

func startSink(t *testing.T, s *sink) string {
	s.t = t
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1/write"
}

// sinkDriver is a driver of version v writing to url, its clock fixed so
// that two drivers send the same series and values.
func sinkDriver(t *testing.T, url, v string, native *NativeHistograms, exemplarPercent ...float64) *Driver {
	c := Config{URL: url, Version: v, Targets: 3, SeriesPerTarget: 500, Batch: 700, Job: "v2test", NativeHistograms: native}
	if len(exemplarPercent) > 0 {
		c.ExemplarPercent = exemplarPercent[0]
	}
	d := newTestDriver(t, c)
	at := time.UnixMilli(1_700_000_000_000)
	d.now = func() time.Time { at = at.Add(time.Second); return at }
	return d
}

// TestVersion2SameSeries: a 2.0 driver sends exactly the series, values
// and timestamps a 1.0 driver sends, every one with a type and a help
// text; the sink counts as many samples as the driver says it sent, and
// as the written headers said.
func TestVersion2SameSeries(t *testing.T) {
	s1, s2 := sink{bare: true}, sink{}
	d1, d2 := sinkDriver(t, startSink(t, &s1), Version1, nil), sinkDriver(t, startSink(t, &s2), Version2, nil)
	for range 5 { // more than one round of the 1500 series
		for _, d := range []*Driver{d1, d2} {
			if r := doOnce(d, 0); r.Class != stats.OK {
				t.Fatalf("%s: %s", r.Class, r.Message)
			}
		}
	}
	if s1.v1 != 5 || s2.v2 != 5 || s1.v2+s2.v1 != 0 {
		t.Errorf("1.0 sink decoded %d 1.0 and %d 2.0 requests, 2.0 sink %d and %d; want 5 of its own each", s1.v1, s1.v2, s2.v1, s2.v2)
	}
	if strings.Join(s1.series, "\n") != strings.Join(s2.series, "\n") {
		t.Errorf("2.0 series differ from 1.0's; first of each:\n%s\n%s", s1.series[0], s2.series[0])
	}
	if s2.helpless != 0 {
		t.Errorf("%d series without type or help", s2.helpless)
	}
	f := d2.proto.snapshot()
	if want := int64(5 * 700); f.sent.samples != want || s2.got.samples != want || f.acked.samples != want {
		t.Errorf("sent %d, sink got %d, headers said %d; want %d each", f.sent.samples, s2.got.samples, f.acked.samples, want)
	}
	checks, err := d2.Verify(context.Background())
	if err != nil || len(checks) != 1 || checks[0].State != driver.CheckOK || checks[0].Found != 3500 {
		t.Errorf("checks %+v, %v: want samples acknowledged 3500 of 3500", checks, err)
	}
	facts := factMap(d1.Facts())
	if v := facts["written by the receiver (its count)"]; !strings.HasPrefix(v, "not available") {
		t.Errorf("1.0 facts say %q of the receiver's count", v)
	}
	if checks, _ := d1.Verify(context.Background()); len(checks) != 0 {
		t.Errorf("1.0 without query_url checked %+v", checks)
	}
}

// TestVersion2PartialLoss: a receiver that answers 2xx but says it wrote
// one sample fewer than each request carried is a silent partial loss.
func TestVersion2PartialLoss(t *testing.T) {
	s := sink{lose: 1}
	d := sinkDriver(t, startSink(t, &s), Version2, nil)
	for range 4 {
		if r := doOnce(d, 0); r.Class != stats.OK {
			t.Fatalf("%s: %s", r.Class, r.Message)
		}
	}
	checks, _ := d.Verify(context.Background())
	if len(checks) != 1 {
		t.Fatalf("checks %+v", checks)
	}
	c := checks[0]
	if c.State != driver.CheckLost || c.Expected != 2800 || c.Found != 2796 || !strings.Contains(c.Note, "silent partial loss") ||
		!strings.Contains(c.Note, "to 4 requests") {
		t.Errorf("check %+v: want 4 of 2800 samples lost, named a silent partial loss", c)
	}
}

// TestVersionAuto: against a 1.0 receiver, auto sends one 2.0 request,
// which fails (415, or 2xx without written headers), says so once, and
// sends 1.0 from then on; what the failed request carried is not
// acknowledged.
func TestVersionAuto(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     *sink
		class stats.Class
		why   string
	}{
		{"415", &sink{refuse2: true, bare: true}, stats.Status4xx, "refused remote write 2.0 with HTTP 415"},
		{"2xx without headers", &sink{bare: true}, stats.Protocol, "without saying what it wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := sinkDriver(t, startSink(t, tc.s), VersionAuto, nil)
			first := doOnce(d, 0)
			if first.Class != tc.class || !strings.HasSuffix(first.Message, "falling back to remote write 1.0") {
				t.Errorf("first request %s %q", first.Class, first.Message)
			}
			for range 3 {
				if r := doOnce(d, 0); r.Class != stats.OK {
					t.Fatalf("after the fall back: %s %s", r.Class, r.Message)
				}
			}
			if tc.s.v1 != 3 || tc.s.v2+tc.s.refused != 1 {
				t.Errorf("sink got %d 1.0 and %d 2.0 requests (%d refused); want 3 and 1", tc.s.v1, tc.s.v2, tc.s.refused)
			}
			facts := factMap(d.Facts())
			if p := facts["protocol"]; !strings.Contains(p, "fell back from 2.0") || !strings.Contains(p, tc.why) {
				t.Errorf("protocol fact %q", p)
			}
			if _, samples, _, _ := d.acks.snapshot(); samples != 3*700 || facts["samples sent"] != "2800" {
				t.Errorf("%d samples acknowledged, %s sent; want 2100 and 2800", samples, facts["samples sent"])
			}
		})
	}
}

// TestNativeHistograms: with native histograms, both versions send the
// same valid histograms (schema, bucket count as asked; count the sum of
// the buckets; no bucket ever going down), one per classic histogram of a
// target; the sink counts as many as the driver says it sent; a receiver
// that writes fewer is a partial loss of histograms.
func TestNativeHistograms(t *testing.T) {
	schema := 2
	nh := &NativeHistograms{Schema: &schema, Buckets: 12, Observations: 50}
	s1, s2 := sink{bare: true}, sink{loseHist: 1}
	d1, d2 := sinkDriver(t, startSink(t, &s1), Version1, nh), sinkDriver(t, startSink(t, &s2), Version2, nh)
	natives := 0
	for _, tm := range d1.gen.tmpl {
		if tm.kind == nhist {
			natives++
			if tm.labels[0].Value != "ebpf_exporter_bio_latency_seconds" && tm.labels[0].Value != "node_exporter_scrape_duration_seconds" {
				t.Errorf("native histogram %v", tm.labels)
			}
		}
	}
	if natives < 3 {
		t.Fatalf("%d native histograms per target", natives)
	}
	rounds := 0
	for d1.gen.cursor.Load() < 4*d1.gen.active {
		for _, d := range []*Driver{d1, d2} {
			if r := doOnce(d, 0); r.Class != stats.OK {
				t.Fatalf("%s: %s", r.Class, r.Message)
			}
		}
		rounds++
	}
	if want := 4 * 3 * natives; len(s1.hists) != want || s1.got.histograms != int64(want) {
		t.Errorf("1.0 sink decoded %d histograms, want %d (4 rounds × 3 targets × %d)", len(s1.hists), want, natives)
	}
	if strings.Join(s1.hists, "\n") != strings.Join(s2.hists, "\n") || strings.Join(s1.series, "\n") != strings.Join(s2.series, "\n") {
		t.Errorf("2.0 histograms or samples differ from 1.0's; first of each:\n%s\n%s", s1.hists[0], s2.hists[0])
	}
	for _, h := range s1.lastHist {
		if h.Schema != 2 || len(h.PositiveBuckets) != 12 || len(h.PositiveSpans) != 1 || h.Count == 0 {
			t.Fatalf("histogram %s: want schema 2, 12 buckets", h)
		}
	}
	f := d2.proto.snapshot()
	if f.sent.histograms != s2.got.histograms || f.sent.samples+f.sent.histograms != int64(rounds*700) {
		t.Errorf("sent %d histograms and %d samples, sink got %d histograms", f.sent.histograms, f.sent.samples, s2.got.histograms)
	}
	checks, _ := d2.Verify(context.Background())
	if len(checks) != 2 || checks[1].Name != "histograms acknowledged" || checks[1].State != driver.CheckLost ||
		checks[1].Expected != float64(f.sent.histograms) || checks[1].Expected-checks[1].Found != float64(rounds) {
		t.Errorf("checks %+v: want one histogram lost per request", checks)
	}
}

// TestExemplars: with exemplar_percent 10, both versions send the same
// exemplars, a trace_id each, on about a tenth of the counter and native
// histogram samples and on nothing else; the sink counts as many as the
// driver says it sent and the written headers said.
func TestExemplars(t *testing.T) {
	s1, s2 := sink{bare: true}, sink{}
	nh := &NativeHistograms{}
	d1, d2 := sinkDriver(t, startSink(t, &s1), Version1, nh, 10), sinkDriver(t, startSink(t, &s2), Version2, nh, 10)
	eligible, names := 0, map[string]bool{}
	for _, tm := range d1.gen.tmpl {
		if exemplarKind(tm.kind) {
			eligible++
			names[tm.labels[0].Value] = true
		}
	}
	for range 20 {
		for _, d := range []*Driver{d1, d2} {
			if r := doOnce(d, 0); r.Class != stats.OK {
				t.Fatalf("%s: %s", r.Class, r.Message)
			}
		}
	}
	if strings.Join(s1.exemplars, "\n") != strings.Join(s2.exemplars, "\n") {
		t.Errorf("2.0 exemplars differ from 1.0's")
	}
	rounds := float64(20*700) / float64(d1.gen.active)
	want := 0.1 * rounds * float64(eligible*3)
	if got := float64(len(s1.exemplars)); math.Abs(got-want) > 4*math.Sqrt(want) {
		t.Errorf("%v exemplars on about %.0f eligible samples, want about %.0f", got, want*10, want)
	}
	for _, e := range s1.exemplars {
		name, _, _ := strings.Cut(strings.TrimPrefix(e, `{__name__="`), `"`)
		if !strings.Contains(e, `{trace_id="`) || !names[name] {
			t.Fatalf("exemplar %s: want a trace_id on a counter or native histogram", e)
		}
	}
	f := d2.proto.snapshot()
	if f.sent.exemplars != int64(len(s2.exemplars)) || f.acked.exemplars != f.sent.exemplars || f.sent.exemplars == 0 {
		t.Errorf("sent %d exemplars, sink got %d, headers said %d", f.sent.exemplars, len(s2.exemplars), f.acked.exemplars)
	}
}

// TestShardedAcknowledgements: the coordinator of a distributed run adds
// up what its workers sent and what the receiver said it wrote of it, and
// names the silent partial loss of one worker's receiver.
func TestShardedAcknowledgements(t *testing.T) {
	good, lossy := sink{}, sink{lose: 2}
	cfg := func(url string) Config {
		return Config{URL: url, Version: Version2, Targets: 4, SeriesPerTarget: 500, Batch: 700, Job: "sharded"}
	}
	coord := newTestDriver(t, cfg("http://127.0.0.1:1/unused"))
	var states [][]byte
	for i, s := range []*sink{&good, &lossy} {
		w := newTestDriver(t, cfg(startSink(t, s)))
		if err := w.Shard(i, 2); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if r := doOnce(w, 0); r.Class != stats.OK {
				t.Fatalf("%s %s", r.Class, r.Message)
			}
		}
		st, err := w.ReadBackState()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
	}
	checks, err := coord.VerifyShards(context.Background(), states)
	if err != nil || len(checks) != 1 {
		t.Fatalf("checks %+v, %v", checks, err)
	}
	c := checks[0]
	if c.Name != "samples acknowledged" || c.State != driver.CheckLost || c.Expected != 6*700 || c.Found != 6*700-6 ||
		!strings.Contains(c.Note, "silent partial loss: the receiver answered 2xx to 3 requests") {
		t.Errorf("check %+v: want 6 of 4200 samples lost by 3 requests of one worker", c)
	}
}
