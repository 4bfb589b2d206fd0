package otlpdriver

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/plan"
)

// TestDecodeFromPlan decodes the params of otlp workloads with the plan's
// own strict decoder, as the CLI does: every key is known, durations are
// strings, nested shape and search params decode, an unknown key is
// refused at its line.
func TestDecodeFromPlan(t *testing.T) {
	const doc = `name: tempo-small
profiles:
  - name: small
    duration: 1m
    workloads:
      - name: ingest
        driver: otlp
        rate: 300/s
        vus: {min: 20, max: 80}
        params:
          endpoint: 127.0.0.1:4317
          shape: custom
          custom: {spans: {min: 5, max: 9}, span_duration: {min: 5ms, max: 1s}, services: [a, b]}
          batch: 2
          headers: {X-Scope-OrgID: t1}
          query_url: http://127.0.0.1:3200
          delay: 5s
      - name: query
        driver: otlp
        rate: 25/s
        vus: {min: 2, max: 10}
        params:
          mode: query
          query_url: http://127.0.0.1:3200
          ids_from: ingest
          queries: [trace_by_id, search]
          search: {query: '{ span.http.route = "/api/cart" }', lookback: 10m}
      - name: typo
        driver: otlp
        rate: 1/s
        vus: {min: 1, max: 1}
        params: {endpoint: 127.0.0.1:4317, shapes: small}
`
	p, err := plan.Parse("tempo.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ws := p.Profiles[0].Workloads
	var ingest, query, typo Config
	if err := ws[0].Params.Decode(&ingest); err != nil {
		t.Fatal(err)
	}
	if err := ws[1].Params.Decode(&query); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{ingest, query} {
		if errs := c.Validate(); len(errs) > 0 {
			t.Errorf("Validate: %v", errs)
		}
	}
	if ingest.Custom.SpanDuration.Min != 5*time.Millisecond || ingest.Delay != 5*time.Second || ingest.Batch != 2 ||
		query.Search.Lookback != 10*time.Minute || query.IDsFrom != "ingest" || query.Mode != ModeQuery {
		t.Errorf("decoded %+v\n%+v", ingest, query)
	}
	err = ws[2].Params.Decode(&typo)
	if err == nil || !containsAll(err.Error(), "tempo.yaml:32:", `unknown key "shapes"`) {
		t.Errorf("unknown key: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
