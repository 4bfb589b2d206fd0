package remotewrite

import (
	"reflect"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// decode is what a receiver does with a body: snappy block (the strict,
// standard decoder), then protobuf.
func decode(t testing.TB, body []byte) *prompb.WriteRequest {
	t.Helper()
	raw, err := snappy.DecodeStrict(nil, body)
	if err != nil {
		t.Fatalf("cannot decode snappy: %v", err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatalf("cannot unmarshal WriteRequest: %v", err)
	}
	return &req
}

// TestEncodeRoundTrip: what encode sends decodes, with prompb and a strict
// snappy decoder, to exactly the request built; over one round every
// series comes once, with the instance and job labels filled in.
func TestEncodeRoundTrip(t *testing.T) {
	c := Config{URL: "http://x/", Targets: 3, SeriesPerTarget: 500, Job: "rt"}.withDefaults()
	g := newGenerator(c)
	st := newBuilder()
	now := time.UnixMilli(1_700_000_000_123)
	seen := map[string]int{}
	for left := int(g.active); left > 0; left -= 700 {
		n := min(left, 700)
		g.fill(st, n, now)
		body, err := st.encode()
		if err != nil {
			t.Fatal(err)
		}
		got := decode(t, body)
		if len(got.Timeseries) != n || st.batch.samples != n {
			t.Fatalf("%d series decoded, batch says %d, want %d", len(got.Timeseries), st.batch.samples, n)
		}
		for i, ts := range got.Timeseries {
			want := st.req.Timeseries[i]
			if !reflect.DeepEqual(ts.Labels, want.Labels) || !reflect.DeepEqual(ts.Samples, want.Samples) {
				t.Fatalf("series %d: decoded %v %v, sent %v %v", i, ts.Labels, ts.Samples, want.Labels, want.Samples)
			}
			if len(ts.Samples) != 1 || ts.Samples[0].Timestamp != now.UnixMilli() {
				t.Fatalf("series %d: samples %v", i, ts.Samples)
			}
			key := ""
			for _, l := range ts.Labels {
				if l.Value == "" {
					t.Fatalf("series %d: empty %s", i, l.Name)
				}
				if l.Name == jobLabel && l.Value != "rt" {
					t.Fatalf("job %q", l.Value)
				}
				key += l.Name + "=" + l.Value + ","
			}
			seen[key]++
		}
	}
	if len(seen) != int(g.active) {
		t.Fatalf("%d distinct series in a round, want %d", len(seen), g.active)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s came %d times in a round", k, n)
		}
	}
}

// TestSizeBound: the size bound fill adds up is never short of what the
// marshaller writes, for either version, with native histograms,
// exemplars on every sample that takes one, and instance values of the
// longest kind (host-N:9100, after churn); the tightness is logged. A
// short bound still encodes, by sizing the request first.
func TestSizeBound(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		c := Config{URL: "http://x/", Targets: 20, SeriesPerTarget: 600, Job: "a-rather-long-job-name-for-the-bound",
			NativeHistograms: &NativeHistograms{Buckets: 160}, ExemplarPercent: 100}.withDefaults()
		g := newGenerator(c)
		g.epoch.Store(g.buildEpoch(nil, 0))
		es := g.epoch.Load()
		for i := range es.inst {
			es.inst[i] = instanceName(1<<40 + uint64(i))
		}
		st := newBuilder()
		st.v2 = v2
		worst := 0.0
		for range 3 * g.active / 700 {
			g.fill(st, 700, time.UnixMilli(1_700_000_000_123))
			size, bound := st.req.Size(), st.bound
			if v2 {
				size = st.w2.req.Size()
				for _, s := range st.w2.req.Symbols {
					bound += 6 + len(s)
				}
			}
			if bound < size {
				t.Fatalf("2.0 %v: bound %d below the size %d", v2, bound, size)
			}
			worst = max(worst, float64(bound)/float64(size))
		}
		t.Logf("2.0 %v: bound at most %.2f × the size", v2, worst)
		st.bound = 10
		body, err := st.encode()
		if err != nil || (!v2 && len(decode(t, body).Timeseries) != 700) {
			t.Errorf("2.0 %v, bound short: %v", v2, err)
		}
	}
}

// BenchmarkEncode is the cost of one request of 2,000 samples: filling
// the WriteRequest from the generator, marshalling and compressing.
func BenchmarkEncode(b *testing.B) {
	c := Config{URL: "http://x/", Targets: 100, SeriesPerTarget: 1000}.withDefaults()
	g := newGenerator(c)
	st := newBuilder()
	now := time.Now()
	var bytes int
	b.ReportAllocs()
	for b.Loop() {
		g.fill(st, DefaultBatch, now)
		body, err := st.encode()
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(body)
	}
	perSample := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / DefaultBatch
	b.ReportMetric(perSample, "ns/sample")
	b.ReportMetric(float64(bytes)/DefaultBatch, "B/sample")
}
