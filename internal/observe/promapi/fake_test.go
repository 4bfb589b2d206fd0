package promapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSeries is one series a fake API answers with: its labels and its
// value at each time; NaN means no value then.
type fakeSeries struct {
	labels map[string]string
	value  func(t time.Time) float64
}

// fakeAPI is an httptest server speaking the parts of the Prometheus HTTP
// API that Source uses. A query is answered with the series of the first
// key of answers that it contains.
type fakeAPI struct {
	t        *testing.T
	srv      *httptest.Server
	config   string // the YAML of /api/v1/status/config; "" answers 404
	answers  map[string][]fakeSeries
	resets   map[string]float64 // resets(...) query containing key → value per series of that key
	warnings []string           // added to every answer
	partial  bool
	refuse   string // a query containing it is answered 400 bad_data, as Prometheus answers bad PromQL

	mu      sync.Mutex
	queries []rangeCall // every query_range request
	auth    []string
}

type rangeCall struct {
	query            string
	start, end, step float64
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, answers: map[string][]fakeSeries{}, resets: map[string]float64{},
		config: "global:\n  scrape_interval: 5s\n"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	switch r.URL.Path {
	case "/api/v1/status/config":
		if f.config == "" {
			http.NotFound(w, r)
			return
		}
		f.reply(w, map[string]string{"yaml": f.config})
	case "/api/v1/query_range":
		f.queryRange(w, r)
	case "/api/v1/query":
		f.instant(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPI) reply(w http.ResponseWriter, data any) {
	body := map[string]any{"status": "success", "data": data}
	if len(f.warnings) > 0 {
		body["warnings"] = f.warnings
	}
	if f.partial {
		body["isPartial"] = true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func formFloat(r *http.Request, key string) float64 {
	v, _ := strconv.ParseFloat(r.Form.Get(key), 64)
	return v
}

func (f *fakeAPI) queryRange(w http.ResponseWriter, r *http.Request) {
	q := rangeCall{query: r.Form.Get("query"), start: formFloat(r, "start"), end: formFloat(r, "end"), step: formFloat(r, "step")}
	if q.step == 0 {
		d, _ := time.ParseDuration(r.Form.Get("step"))
		q.step = d.Seconds()
	}
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	var result []map[string]any
	for _, s := range f.match(q.query) {
		var values [][2]any
		for ts := q.start; ts <= q.end+1e-9; ts += q.step {
			t := time.UnixMilli(int64(math.Round(ts * 1000)))
			if v := s.value(t); !math.IsNaN(v) {
				values = append(values, [2]any{ts, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
		if len(values) > 0 {
			result = append(result, map[string]any{"metric": s.labels, "values": values})
		}
	}
	f.reply(w, map[string]any{"resultType": "matrix", "result": result})
}

func (f *fakeAPI) instant(w http.ResponseWriter, r *http.Request) {
	q := r.Form.Get("query")
	var result []map[string]any
	if f.refuse != "" && strings.Contains(q, f.refuse) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "bad_data",
			"error": `1:5: parse error: unexpected "(" in aggregation`})
		return
	}
	if !strings.Contains(q, "resets(") {
		ts := formFloat(r, "time")
		for _, s := range f.match(q) {
			if v := s.value(time.UnixMilli(int64(math.Round(ts * 1000)))); !math.IsNaN(v) {
				result = append(result, map[string]any{"metric": s.labels, "value": [2]any{ts, strconv.FormatFloat(v, 'g', -1, 64)}})
			}
		}
	}
	for key, v := range f.resets {
		if !strings.HasPrefix(q, "sum by") || !strings.Contains(q, "resets(") || !strings.Contains(q, key) {
			continue
		}
		for _, s := range f.match(q) {
			result = append(result, map[string]any{"metric": s.labels, "value": [2]any{formFloat(r, "time"), fmt.Sprint(v)}})
		}
	}
	f.reply(w, map[string]any{"resultType": "vector", "result": result})
}

// match returns the series of the first answers key the query contains.
func (f *fakeAPI) match(query string) []fakeSeries {
	for key, ss := range f.answers {
		if strings.Contains(query, key) {
			return ss
		}
	}
	return nil
}

// constant is a series with one value throughout.
func constant(v float64, labels ...string) fakeSeries {
	return between(v, time.Time{}, time.Time{}, labels...)
}

// between is a series with value v from from to to (zero: unbounded).
func between(v float64, from, to time.Time, labels ...string) fakeSeries {
	m := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[labels[i]] = labels[i+1]
	}
	return fakeSeries{labels: m, value: func(t time.Time) float64 {
		if !from.IsZero() && t.Before(from) || !to.IsZero() && t.After(to) {
			return math.NaN()
		}
		return v
	}}
}
