// Package promapi reads what components of a system under test spent from a
// Prometheus-compatible HTTP API (Prometheus, VictoriaMetrics, Mimir,
// Thanos) instead of sampling processes on perflab's own machine: after a
// phase, one range query per resource over the phase's window at the
// source's step, mapped onto the metric names of internal/observe, so that
// the tables, sizing and charts of local components apply unchanged.
//
// A source either uses a preset (kubernetes, process-exporter,
// node-exporter, self) that writes the PromQL from a few selectors, or
// explicit queries, one per metric. Series are grouped into components by a
// regular expression on one label, like the label_replace of a dashboard:
// without a capture group every series counts towards the one component;
// with one, each distinct value of the first capture group is a component
// of its own. What the answer cannot support (no series, a series that
// stops or starts inside the window, a partial answer, the API's warnings,
// a step too coarse for a P99, counter resets, restarts) comes back as
// warnings, never as zeros.
package promapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/perflab/perflab/internal/secret"
)

// DefaultStep is the step used when neither the plan nor Prometheus'
// configuration gives one.
const DefaultStep = 15 * time.Second

// maxPoints bounds the steps of one range query; Prometheus refuses more
// than 11,000, so longer windows are queried in parts.
const maxPoints = 10_000

// Config says where a source reads from and what.
type Config struct {
	Name        string // the plan component's name; see ComponentName
	URL         string // base URL of the API, e.g. http://127.0.0.1:9090 (without /api/v1)
	BearerToken string // sent as Authorization: Bearer; "" for none
	Username    string // basic auth, when set
	Password    string
	Preset      string   // a key of Presets; "" for explicit queries only
	Selector    Selector // the preset's parameters
	// Queries maps a metric name of internal/observe (or metric:<name>) to
	// PromQL; they replace the preset's query of the same metric or add
	// to them. Each answer's series are grouped by Split.
	Queries map[string]string
	// Split groups series into components: the value of label Label must
	// match Regex (anchored at both ends). A preset sets both from its
	// selector; explicit queries without a preset need them only to split.
	Split Split
	// Step is the range queries' step; 0 reads the scrape interval from
	// Prometheus' configuration, else DefaultStep (see Resolve).
	Step time.Duration
	// RateWindow is the range of the presets' rate(); 0 is Grafana's
	// $__rate_interval: max(step + scrape interval, 4 × scrape interval),
	// and for the kubernetes preset at least 1m (see cAdvisorRate).
	RateWindow time.Duration
}

// Split is the label and regular expression that group series into
// components.
type Split struct {
	Label string
	Regex string
}

// Point is one value of a series at one step.
type Point struct {
	T time.Time
	V float64
}

// Result is what one window's queries found.
type Result struct {
	// Series maps a component's name (ComponentName) to metric name to
	// points in time order.
	Series   map[string]map[string][]Point
	Warnings []string
}

// Source reads one plan component's resources from the API.
type Source struct {
	cfg      Config
	api      v1.API
	partial  *partialWatch
	split    *regexp.Regexp
	queries  []query
	step     time.Duration
	scrape   time.Duration // the scrape interval, for the rate window and staleness
	stepNote string
	pending  []string // warnings of the answers, until Query takes them
}

// query is one PromQL expression whose answer becomes one metric.
type query struct {
	metric string
	expr   string
	// counter, when set, is a counter selector whose resets over the
	// window are counted and warned of.
	counter string
	// optional queries (Go runtime, threads, restarts, …) may have no
	// series without a warning: not every component exports them.
	optional bool
	// appears marks a query whose series appear when what they count
	// happens (kube-state-metrics has a last termination's reason once a
	// container terminated): one that starts inside the window is news,
	// not a gap.
	appears bool
}

// New checks cfg and returns its source. It does not contact the API.
func New(cfg Config) (*Source, error) {
	p, ok := Presets[cfg.Preset]
	if cfg.Preset != "" && !ok {
		return nil, fmt.Errorf("cannot use preset %q: want one of %s", cfg.Preset, presetNames())
	}
	if ok {
		cfg.Split = p.split(cfg.Selector)
	}
	if cfg.Split.Label == "" {
		cfg.Split.Regex = ""
	}
	re, err := regexp.Compile("^(?:" + cfg.Split.Regex + ")$")
	if err != nil {
		return nil, fmt.Errorf("cannot use regex %q: %w", cfg.Split.Regex, err)
	}
	if cfg.Preset == "" && len(cfg.Queries) == 0 {
		return nil, errors.New("cannot query prometheus: no preset and no queries")
	}
	api, pw, err := newAPI(cfg)
	if err != nil {
		return nil, err
	}
	return &Source{cfg: cfg, api: api, partial: pw, split: re}, nil
}

// Splits reports whether the source's components are named by a capture
// group, and so known only once the API has answered.
func (s *Source) Splits() bool { return s.split.NumSubexp() > 0 }

// Resolve settles the step (the plan's; else the global scrape_interval of
// Prometheus' configuration, read from /api/v1/status/config; else
// DefaultStep) and writes the queries. It returns a note that says which
// step was taken and why. It is called once, before the first Query; a
// failure to read the configuration is not an error.
func (s *Source) Resolve(ctx context.Context) string {
	scrape, err := scrapeInterval(ctx, s.api)
	switch {
	case s.cfg.Step > 0:
		s.step = s.cfg.Step
		s.stepNote = fmt.Sprintf("step %v, set by the plan", s.step)
	case err == nil:
		s.step = scrape
		s.stepNote = fmt.Sprintf("step %v: the scrape interval in Prometheus' configuration (/api/v1/status/config)", s.step)
	default:
		s.step = DefaultStep
		s.stepNote = fmt.Sprintf("step %v, the default: the scrape interval could not be read from /api/v1/status/config (%v)", s.step, err)
	}
	if err != nil {
		scrape = s.step
	}
	s.scrape = scrape
	s.queries = s.buildQueries()
	return s.stepNote
}

// Step is the step of the range queries; valid after Resolve.
func (s *Source) Step() time.Duration { return s.step }

// DataBy is when Prometheus has scraped everything a query of a window
// ending at end needs: one step of margin after it and one scrape interval
// to scrape it.
func (s *Source) DataBy(end time.Time) time.Time { return end.Add(s.step + s.scrape) }

// rateWindow is the range of rate() in the presets' queries: the plan's,
// else Grafana's $__rate_interval, but no shorter than the preset's
// minimum.
func (s *Source) rateWindow() time.Duration {
	if s.cfg.RateWindow > 0 {
		return s.cfg.RateWindow
	}
	return max(s.step+s.scrape, 4*s.scrape, Presets[s.cfg.Preset].minRate)
}

func (s *Source) buildQueries() []query {
	var qs []query
	if p, ok := Presets[s.cfg.Preset]; ok {
		qs = p.queries(s.cfg.Selector, promDuration(s.rateWindow()))
	}
	for _, m := range slices.Sorted(maps.Keys(s.cfg.Queries)) {
		q := query{metric: m, expr: s.cfg.Queries[m]}
		if i := indexOf(qs, m); i >= 0 {
			qs[i] = q
		} else {
			qs = append(qs, q)
		}
	}
	return qs
}

func indexOf(qs []query, metric string) int {
	for i, q := range qs {
		if q.metric == metric {
			return i
		}
	}
	return -1
}

// Query runs every query over the window [start, end] with one step of
// margin on each side, at step-aligned times, and groups the answers into
// components. An error is returned only when no query could be answered;
// a query that failed among others that did not is a warning. Query is not
// safe for concurrent use.
func (s *Source) Query(ctx context.Context, start, end time.Time) (*Result, error) {
	if s.step <= 0 {
		return nil, errors.New("cannot query prometheus: Resolve was not called")
	}
	res := &Result{Series: map[string]map[string][]Point{}}
	from, to := alignDown(start.Add(-s.step), s.step), alignUp(end.Add(s.step), s.step)
	var errs []error
	had := map[string]bool{}
	for _, q := range s.queries {
		m, err := s.rangeQuery(ctx, q, from, to)
		res.Warnings, s.pending = append(res.Warnings, s.pending...), nil
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.metric, err))
			res.warn("cannot query %s (%s): %v", q.metric, q.expr, err)
			continue
		}
		had[q.metric] = len(m) > 0
		s.group(q, m, res)
		s.checkResets(ctx, q, start, end, res)
		res.Warnings, s.pending = append(res.Warnings, s.pending...), nil
	}
	if len(errs) == len(s.queries) && len(errs) > 0 {
		return nil, fmt.Errorf("cannot query prometheus at %s: %w", secret.URL(s.cfg.URL), sameCause(s.queries, errs))
	}
	for _, q := range s.queries {
		if answered, ok := had[q.metric]; ok {
			s.checkSeries(q, answered, start, end, res)
		}
	}
	s.checkWindow(start, end, res)
	s.checkRestarts(start, end, res)
	return res, nil
}

// sameCause is the error of every query failing, on one line (it lands in
// a report's list of warnings): the cause once when every query failed
// alike (Prometheus down), else each query's, "; "-separated.
func sameCause(qs []query, errs []error) error {
	var names []string
	for _, q := range qs {
		names = append(names, q.metric)
	}
	first := errors.Unwrap(errs[0])
	for _, err := range errs[1:] {
		if first == nil || errors.Unwrap(err) == nil || errors.Unwrap(err).Error() != first.Error() {
			msgs := make([]string, len(errs))
			for i, err := range errs {
				msgs[i] = err.Error()
			}
			return errors.New(strings.Join(msgs, "; "))
		}
	}
	return fmt.Errorf("%w (every query: %s)", first, strings.Join(names, ", "))
}

func (r *Result) warn(format string, a ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, a...))
}

func alignDown(t time.Time, step time.Duration) time.Time { return t.Truncate(step) }

func alignUp(t time.Time, step time.Duration) time.Time {
	if d := t.Truncate(step); !d.Equal(t) {
		return d.Add(step)
	}
	return t
}

// Check asks the API each query at now, before any load, so that a source
// that cannot work stops the run before it starts rather than after the
// load has run unobserved. It is an error when no query can be answered
// (the API cannot be reached, refuses the credentials, answers 5xx) or
// when the API refuses a query as bad PromQL. A required query with no
// series now is a warning: the component may not have been scraped yet,
// but if nothing appears it will have no figures, and the selectors are
// the first thing to check. Check is called after Resolve.
func (s *Source) Check(ctx context.Context, now time.Time) ([]string, error) {
	if s.step <= 0 {
		return nil, errors.New("cannot check prometheus: Resolve was not called")
	}
	var warns []string
	var errs []error
	for _, q := range s.queries {
		vec, err := s.instant(ctx, q, q.expr, now)
		warns, s.pending = append(warns, s.pending...), nil
		if badQuery(err) {
			return warns, fmt.Errorf("prometheus at %s refused the query of %s (%s): %w", secret.URL(s.cfg.URL), q.metric, q.expr, err)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.metric, err))
			continue
		}
		if len(vec) == 0 && !q.optional {
			warns = append(warns, fmt.Sprintf("no series for %s yet: %s returns nothing at %s UTC; if none appear, there will be no %s figures (check the selectors)",
				q.metric, q.expr, clock(now), q.metric))
		}
	}
	if len(errs) == len(s.queries) && len(errs) > 0 {
		return warns, fmt.Errorf("cannot query prometheus at %s: %w", secret.URL(s.cfg.URL), sameCause(s.queries, errs))
	}
	for _, err := range errs {
		warns = append(warns, fmt.Sprintf("cannot query %v", err))
	}
	return warns, nil
}

// badQuery says whether err is the API refusing a query as invalid:
// Prometheus answers 400 with errorType bad_data, VictoriaMetrics 422.
func badQuery(err error) bool {
	var e *v1.Error
	return errors.As(err, &e) && (e.Type == v1.ErrBadData || e.Type == "422" || e.Type == "400")
}
