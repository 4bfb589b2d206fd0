package export

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"

	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

func TestNativeIndex(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int32
	}{{1, 0}, {2, 32}, {0.5, -32}, {1.01, 1}, {math.Pow(2, 1.0/32), 1}, {math.Pow(2, 1.0/32) * 1.0001, 2}} {
		if got := nativeIndex(c.v); got != c.want {
			t.Errorf("nativeIndex(%v) = %d, want %d", c.v, got, c.want)
		}
	}
	n := &native{buckets: map[int32]uint64{-3: 2, -2: 5, 4: 1, 5: 1}, count: 9, sum: 1}
	h := n.histogram()
	want := &histogram.Histogram{Schema: NativeSchema, Count: 9, Sum: 1, PositiveSpans: []histogram.Span{{Offset: -3, Length: 2}, {Offset: 5, Length: 2}},
		PositiveBuckets: []int64{2, 3, -4, 0}}
	if !h.Equals(want) {
		t.Errorf("histogram %v, want %v", h, want)
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
}

// spread is an interval whose successful operations' latencies run from
// 1 ms to n ms, one each.
func spread(i, n int) *stats.Interval {
	iv := interval(i, 0, 0, 0)
	op := iv.Ops["get"]
	for k := 1; k <= n; k++ {
		op.Latency.Record(time.Duration(k) * time.Millisecond)
	}
	op.Classes[stats.OK] = int64(n)
	return iv
}

// TestNativeHistogramsReal sends native histograms to Prometheus (with
// the feature on) and to VictoriaMetrics 1.79, which does not take them:
// Prometheus' histogram_quantile of the run is within the schema's
// resolution of the recorded p99 and its count the operations';
// VictoriaMetrics takes the requests and keeps the summary.
func TestNativeHistogramsReal(t *testing.T) {
	prom := testutil.StartPrometheus(t, "--enable-feature=native-histograms")
	vm := testutil.StartVictoriaMetrics(t)
	now := time.Now().Truncate(time.Second).Add(-10 * time.Second)
	t0 := now
	var targets []Target
	for _, base := range []string{prom, vm} {
		targets = append(targets, Target{Kind: RemoteWrite, URL: base + "/api/v1/write", NativeHistograms: true})
	}
	set, err := Start(targets, Options{Run: "native"})
	if err != nil {
		t.Fatal(err)
	}
	all := stats.NewHist()
	for i := range 3 {
		iv := spread(i, 400*(i+1))
		iv.Start, iv.End = t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i+1)*time.Second)
		all.Merge(iv.Ops["get"].Latency)
		set.Interval(Workload{Name: "w"}, iv)
	}
	for _, rep := range set.Close(10 * time.Second) {
		if !rep.OK() {
			t.Fatalf("%s", rep)
		}
	}
	at := t0.Add(3 * time.Second)
	if got := instant(t, prom, `histogram_count(perflab_latency_histogram_seconds{run="native"})`, at); got != float64(all.Count()) {
		t.Errorf("histogram_count %v, want %d", got, all.Count())
	}
	want := all.Quantile(0.99).Seconds()
	if got := instant(t, prom, `histogram_quantile(0.99, perflab_latency_histogram_seconds{run="native"})`, at); math.Abs(got-want)/want > 0.023 {
		t.Errorf("histogram_quantile(0.99) %v, the recorded p99 %v", got, want)
	}
	var got float64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if got = instant(t, vm, `perflab_latency_seconds_count{run="native"}`, at); got == float64(all.Count()) {
			break
		}
	}
	if got != float64(all.Count()) {
		t.Errorf("VictoriaMetrics: perflab_latency_seconds_count %v, want %d", got, all.Count())
	}
}

// instant is the one value of q at time at; NaN when there is none.
func instant(t *testing.T, base, q string, at time.Time) float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatInt(at.Unix(), 10)}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Data.Result) != 1 {
		return math.NaN()
	}
	s, _ := out.Data.Result[0].Value[1].(string)
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
