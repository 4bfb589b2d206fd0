package remotewrite

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// writeFor calls Do at the driver's natural rate for d, sequentially, and
// fails the test on any operation that is not OK.
func writeFor(t *testing.T, drv *Driver, d time.Duration) int {
	t.Helper()
	tick := time.NewTicker(time.Duration(float64(time.Second) / drv.RequestsPerSecond()))
	defer tick.Stop()
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		var r driver.Result
		drv.Do(context.Background(), 0, &r)
		if r.Class != stats.OK {
			t.Fatalf("request %d: %s %s", n, r.Class, r.Message)
		}
		<-tick.C
	}
	return n
}

// TestRealReceivers writes node_exporter-like series with churn to
// VictoriaMetrics, Prometheus 2.42 and Prometheus 3, then reads them back:
// every series and every sample acknowledged is found. The 1.0 receivers
// get version auto, and it falls back to 1.0 after one request; Prometheus
// 3 gets 2.0 and 1.0, and over 2.0 says it wrote every sample sent:
// sent = acknowledged = read back. Then through a proxy that answers 204
// to every other request without passing it on, the read-back reports the
// samples lost.
func TestRealReceivers(t *testing.T) {
	t.Parallel()
	for _, rcv := range []struct {
		name    string
		start   func(testing.TB, ...string) string
		version string
	}{
		{"victoriametrics", testutil.StartVictoriaMetrics, VersionAuto},
		{"prometheus", testutil.StartPrometheus, VersionAuto},
		{"prometheus3", testutil.StartPrometheus3, Version2},
	} {
		t.Run(rcv.name, func(t *testing.T) {
			t.Parallel()
			base := rcv.start(t)
			if rcv.version != Version2 {
				t.Run("complete", func(t *testing.T) { complete(t, base, rcv.version, nil) })
			} else {
				nh := &NativeHistograms{Buckets: 16, Observations: 40}
				t.Run("complete-2.0-native", func(t *testing.T) { complete(t, base, Version2, nh) })
				t.Run("complete-1.0-native", func(t *testing.T) { complete(t, base, Version1, nh) })
			}
			t.Run("lossy", func(t *testing.T) { lossy(t, base) })
		})
	}
}

// complete writes with version v, and native histograms and exemplars on
// 10 % of the samples that take them when nh is set, and reads back: with
// auto, the first request fails and the rest go as 1.0.
func complete(t *testing.T, base, v string, nh *NativeHistograms) {
	exemplars := 0.0
	if nh != nil {
		exemplars = 10
	}
	drv := newTestDriver(t, Config{URL: base + "/api/v1/write", QueryURL: base, Job: "complete-" + v, Version: v,
		NativeHistograms: nh, ExemplarPercent: exemplars,
		Targets: 4, SeriesPerTarget: 400, ScrapeInterval: 500 * time.Millisecond, Batch: 700,
		Churn: Churn{Percent: 25, Every: time.Second}, VerifyWait: 20 * time.Second})
	failed := 0
	if v == VersionAuto {
		if r := doOnce(drv, 0); r.Class == stats.OK || !strings.Contains(r.Message, "falling back to remote write 1.0") {
			t.Fatalf("auto's first request to a 1.0 receiver: %s %s", r.Class, r.Message)
		}
		failed = 1
	}
	n := writeFor(t, drv, 3*time.Second)
	checks, err := drv.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	series, samples, _, _ := drv.acks.snapshot()
	if series <= drv.ActiveSeries() {
		t.Errorf("%d series acknowledged in %d requests: churn made no new series (%d active)", series, n, drv.ActiveSeries())
	}
	for i, want := range []float64{float64(series), float64(samples)} {
		c := checks[i]
		if c.State == driver.CheckLost || c.State == driver.CheckUnverified || c.Expected != want || c.Found != want {
			t.Errorf("%s: %+v, want %v found", c.Name, c, want)
		}
	}
	figs := drv.proto.snapshot()
	if figs.sent.samples != samples+int64(failed*drv.batch) {
		t.Errorf("sent %d samples, %d acknowledged, %d requests failed", figs.sent.samples, samples, failed)
	}
	if nh != nil {
		checkNative(t, drv, checks[2:6])
		checks = append(checks[:2], checks[6:]...)
	}
	switch v {
	case Version2:
		if len(checks) != 3+2*min(1, len(drv.acks.lastHist)) || checks[2].Name != "samples acknowledged" || checks[2].State != driver.CheckOK ||
			figs.acked.samples != samples || figs.acked.histograms != figs.sent.histograms ||
			figs.acked.exemplars != figs.sent.exemplars || figs.okBare != 0 {
			t.Errorf("2.0: the receiver said it wrote %d of %d samples, %d of %d histograms; checks %+v",
				figs.acked.samples, samples, figs.acked.histograms, figs.sent.histograms, checks)
		}
	case VersionAuto:
		if figs.fellBack == "" || len(checks) != 2 {
			t.Errorf("auto did not fall back (%q), or checks acknowledgements: %+v", figs.fellBack, checks)
		}
	}
	t.Logf("%d requests, %d series, %d samples: %+v; %s", n, series, samples, checks, drv.protocolFact(figs))
}

// checkNative: every native histogram acknowledged was read back, with
// the observations and sums it carried, by histogram_count and
// histogram_sum; and every exemplar, by the exemplar API.
func checkNative(t *testing.T, drv *Driver, checks []driver.Check) {
	t.Helper()
	rb := drv.acks.readBack(drv.gen.tmpl)
	if rb.Histograms == 0 || rb.HistCount == 0 {
		t.Fatalf("no native histogram acknowledged: %+v", rb)
	}
	if rb.Exemplars == 0 {
		t.Fatalf("no exemplar acknowledged: %+v", rb)
	}
	for _, i := range []int{0, 3} { // histograms, exemplars
		if !strings.HasPrefix(checks[i].Note, "sent ") || !strings.Contains(checks[i].Note, " / read back ") {
			t.Errorf("%s: note %q does not say sent / acknowledged / read back", checks[i].Name, checks[i].Note)
		}
	}
	for i, want := range []float64{float64(rb.Histograms), rb.HistCount, rb.HistSum, float64(rb.Exemplars)} {
		c := checks[i]
		if c.State == driver.CheckLost || c.State == driver.CheckUnverified || math.Abs(c.Expected-want) > 1e-9*want ||
			math.Abs(c.Found-want) > 1e-9*want {
			t.Errorf("%s: %+v, want %v found", c.Name, c, want)
		}
	}
}

func lossy(t *testing.T, base string) {
	var reqs atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if reqs.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusNoContent) // acknowledged, dropped
			return
		}
		fwd, _ := http.NewRequest(http.MethodPost, base+"/api/v1/write", bytes.NewReader(body))
		fwd.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(fwd)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}))
	defer proxy.Close()
	drv := newTestDriver(t, Config{URL: proxy.URL, QueryURL: base, Job: "lossy",
		Targets: 2, SeriesPerTarget: 400, ScrapeInterval: 500 * time.Millisecond, Batch: 400,
		VerifyWait: 4 * time.Second})
	writeFor(t, drv, 2*time.Second)
	checks, err := drv.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := checks[1]
	if s.Name != "samples" || s.State != driver.CheckLost || s.Found <= 0 || s.Found > s.Expected*0.6 {
		t.Errorf("samples check %+v: want about half lost", s)
	}
	t.Logf("%+v", checks)
}
