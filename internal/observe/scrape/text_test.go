package scrape

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observetest"
)

// The scanner must read every name as expfmt's families do.
func TestTextReaderAgreesWithExpfmt(t *testing.T) {
	want := []string{"g", "c_total", "u", "s_count", "s_sum", "s", "h_count", "h_sum", "h", "gh_count",
		"x_count", "x_sum", "y_count", "lone_count", "help_count", "absent", "absent_count", "esc", "ts"}
	for _, tc := range []struct{ name, text string }{
		{"types", `# HELP g A gauge.
# TYPE g gauge
g{a="1"} 1.5
g{a="2"} 2.5
# TYPE c_total counter
c_total 10
u{x="y"} 3
u 4
`},
		{"summary and histogram", `# TYPE s summary
s{quantile="0.5"} 0.1
s_sum{a="1"} 4
s_sum{a="2"} 1
s_count{a="1"} 7
s_count{a="2"} 3
# TYPE h histogram
h_bucket{le="1"} 2
h_bucket{le="+Inf"} 5
h_sum 9.5
h_count 5
# TYPE gh gaugehistogram
gh_bucket{le="+Inf"} 2
gh_count 2
`},
		{"suffixes of other families", `# TYPE x gauge
x 1
x_count 5
x_sum 6
y 2
y_count 8
lone_count 9
# HELP help_count Its own family.
# TYPE help summary
help_count 4
help_sum 1
`},
		{"syntax", "\n  # a comment\n\t g  {a=\"x\\\"}y\\\\\", b=\"\\n\",} 1e3 1700000000000\n" +
			"esc{a=\"}\"} NaN\nts +Inf -5\nu -Inf\n"},
		{"empty", ""},
		{"quoted name", "{\"g\"} 4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := expfmt.NewTextParser(model.UTF8Validation)
			families, err := p.TextToMetricFamilies(strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			get, err := newTextReader(want).read([]byte(tc.text))
			if errors.Is(err, errFallback) {
				return // expfmt reads it
			} else if err != nil {
				t.Fatal(err)
			}
			for _, name := range want {
				v, ok := get.value(name)
				wv, wok := sum(families, name)
				if ok != wok || (ok && v != wv && !(v != v && wv != wv)) {
					t.Errorf("%s = %v, %v; expfmt %v, %v", name, v, ok, wv, wok)
				}
				if c, wc := get.counter(name), isCounter(families, name); ok && c != wc {
					t.Errorf("%s: counter %v; expfmt's type says %v", name, c, wc)
				}
			}
		})
	}
}

func TestTextReaderRejectsWhatExpfmtRejects(t *testing.T) {
	for _, text := range []string{
		"g{ 3\n",
		"g{a=1} 3\n",
		"g{a=\"1\" 3\n",
		"g{a=\"1\\x\"} 3\n",
		"g\n",
		"g 1 2 3\n",
		"g 1 x\n",
		"g 1", // no newline at the end: cut short
		"# TYPE g gauges\n",
		"# TYPE g gauge extra\n",
		"9g 1\n",
		"g abc\n",
	} {
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(strings.NewReader(text)); err == nil {
			t.Errorf("expfmt accepts %q", text)
		}
		if _, err := newTextReader([]string{"g"}).read([]byte(text)); err == nil {
			t.Errorf("the scanner accepts %q", text)
		}
	}
}

// Reading a 1,000-line /metrics every second must not load the process
// that paces the load: expfmt's parser made 34,000 allocations of it.
func TestScraperReadsWithLittleGarbage(t *testing.T) {
	body := []byte(observetest.Exposition(1000))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}))
	t.Cleanup(ts.Close)
	s := New(ts.URL, 5*time.Second, []string{"http_request_duration_seconds_3_count"})
	now := time.Now()
	allocs := testing.AllocsPerRun(20, func() {
		now = now.Add(time.Second)
		if _, err := s.Sample(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1000 {
		t.Errorf("%.0f allocations per sample of a 1,000-line /metrics, want at most 1000", allocs)
	}
}

// What the scanner leaves to expfmt is read, or refused, by expfmt.
func TestScraperFallsBackToExpfmt(t *testing.T) {
	srv, url := start(t)
	s := New(url, time.Second, nil)
	srv.set(200, "{\"go_goroutines\"} 7\n")
	observetest.CheckPoints(t, observetest.Sample(t, s, t0), []observe.Point{{Metric: observe.GoGoroutines, Value: 7}})
	srv.set(200, "{\"go_goroutines\"} x\n")
	if _, err := s.Sample(context.Background(), t0.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "cannot parse the metrics of") {
		t.Errorf("error %v, want expfmt's parse error", err)
	}
}
