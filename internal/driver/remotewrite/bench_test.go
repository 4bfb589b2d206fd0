package remotewrite

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkDo is one VU writing batches to a receiver that answers 204
// without decoding: the driver's per-request cost plus net/http's.
func BenchmarkDo(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	d, err := New(Config{URL: srv.URL + "/api/v1/write", Targets: 2, SeriesPerTarget: 400,
		Headers: map[string]string{"X-Scope-OrgID": "t1"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	var r driver.Result
	b.ReportAllocs()
	for b.Loop() {
		d.Do(context.Background(), 0, &r)
		if r.Class != stats.OK {
			b.Fatalf("%v: %s", r.Class, r.Message)
		}
	}
}
