package promql

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkDo is one VU querying a fake API that answers a small vector:
// the driver's per-request cost plus net/http's.
func BenchmarkDo(b *testing.B) {
	a := &api{code: 200, body: okVector}
	srv := httptest.NewServer(a)
	b.Cleanup(srv.Close)
	d, err := New(Config{URL: srv.URL, Headers: map[string]string{"X-Scope-OrgID": "t1"},
		Queries: []Query{{Name: "up", Expr: "up == 1"}}})
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
