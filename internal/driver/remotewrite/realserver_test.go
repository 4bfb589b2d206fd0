package remotewrite

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
// VictoriaMetrics and to Prometheus, then reads them back: every series
// and every sample acknowledged is found. Then through a proxy that
// answers 204 to every other request without passing it on, the read-back
// reports the samples lost.
func TestRealReceivers(t *testing.T) {
	for _, rcv := range []struct {
		name  string
		start func(testing.TB, ...string) string
	}{
		{"victoriametrics", testutil.StartVictoriaMetrics},
		{"prometheus", testutil.StartPrometheus},
	} {
		t.Run(rcv.name, func(t *testing.T) {
			t.Parallel()
			base := rcv.start(t)
			t.Run("complete", func(t *testing.T) { complete(t, base) })
			t.Run("lossy", func(t *testing.T) { lossy(t, base) })
		})
	}
}

func complete(t *testing.T, base string) {
	drv := newTestDriver(t, Config{URL: base + "/api/v1/write", QueryURL: base, Job: "complete",
		Targets: 4, SeriesPerTarget: 400, ScrapeInterval: 500 * time.Millisecond, Batch: 700,
		Churn: Churn{Percent: 25, Every: time.Second}, VerifyWait: 20 * time.Second})
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
	t.Logf("%d requests, %d series, %d samples: %+v", n, series, samples, checks)
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
