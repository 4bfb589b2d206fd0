package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/perflab/perflab/internal/secret"
)

// queryTimeout bounds one API call.
const queryTimeout = 30 * time.Second

// newAPI builds the API client: credentials are added to every request,
// and answers are watched for isPartial, which client_golang drops.
func newAPI(cfg Config) (v1.API, *partialWatch, error) {
	rt := http.RoundTripper(http.DefaultTransport)
	if cfg.BearerToken != "" || cfg.Username != "" {
		rt = &authTransport{next: rt, token: cfg.BearerToken, user: cfg.Username, password: cfg.Password}
	}
	c, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: rt})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot use prometheus url %q: %w", secret.URL(cfg.URL), err)
	}
	pw := &partialWatch{Client: c}
	return v1.NewAPI(pw), pw, nil
}

// authTransport adds a bearer token or basic auth to each request.
type authTransport struct {
	next                  http.RoundTripper
	token, user, password string
}

func (a *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	} else {
		req.SetBasicAuth(a.user, a.password)
	}
	return a.next.RoundTrip(req)
}

// partialWatch remembers whether an answer said isPartial: true (Thanos,
// VictoriaMetrics, Mimir when a store or shard did not answer).
type partialWatch struct {
	api.Client
	mu      sync.Mutex
	partial bool
}

func (p *partialWatch) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := p.Client.Do(ctx, req)
	var head struct {
		IsPartial bool `json:"isPartial"`
	}
	if err == nil && json.Unmarshal(body, &head) == nil && head.IsPartial {
		p.mu.Lock()
		p.partial = true
		p.mu.Unlock()
	}
	return resp, body, err
}

// take returns whether an answer since the last call was partial.
func (p *partialWatch) take() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.partial
	p.partial = false
	return was
}

// scrapeInterval reads global.scrape_interval from Prometheus'
// configuration; Prometheus' own default (1m) when the file sets none.
func scrapeInterval(ctx context.Context, a v1.API) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	cr, err := a.Config(ctx)
	if err != nil {
		return 0, err
	}
	var conf struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
	}
	if err := yaml.Unmarshal([]byte(cr.YAML), &conf); err != nil {
		return 0, fmt.Errorf("cannot read prometheus configuration: %w", err)
	}
	if conf.Global.ScrapeInterval == "" {
		return time.Minute, nil
	}
	d, err := model.ParseDuration(conf.Global.ScrapeInterval)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("cannot read scrape_interval %q of prometheus configuration", conf.Global.ScrapeInterval)
	}
	return time.Duration(d), nil
}

// rangeQuery runs q over [from, to] at the source's step, in parts of at
// most maxPoints steps, and returns the series joined. The API's warnings
// and a partial answer are kept in s.pending.
func (s *Source) rangeQuery(ctx context.Context, q query, from, to time.Time) (model.Matrix, error) {
	joined := map[model.Fingerprint]*model.SampleStream{}
	var order []model.Fingerprint
	for start := from; !start.After(to); start = start.Add(maxPoints * s.step) {
		end := start.Add((maxPoints - 1) * s.step)
		if end.After(to) {
			end = to
		}
		m, err := s.rangePart(ctx, q, start, end)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			fp := ss.Metric.Fingerprint()
			if have := joined[fp]; have != nil {
				have.Values = append(have.Values, ss.Values...)
				continue
			}
			joined[fp] = ss
			order = append(order, fp)
		}
	}
	out := make(model.Matrix, 0, len(order))
	for _, fp := range order {
		out = append(out, joined[fp])
	}
	return out, nil
}

// rangePart is one query_range call.
func (s *Source) rangePart(ctx context.Context, q query, start, end time.Time) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	s.partial.take()
	v, warns, _, err := s.api.QueryRange(ctx, q.expr, v1.Range{Start: start, End: end, Step: s.step})
	s.noteAnswer(q, warns)
	if err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("want a range vector (matrix), got %s", v.Type())
	}
	return m, nil
}

// noteAnswer keeps the API's warnings and a partial answer of q.
func (s *Source) noteAnswer(q query, warns v1.Warnings) {
	for _, w := range warns {
		s.pending = append(s.pending, fmt.Sprintf("the answer to %s (%s) came with a warning: %s", q.metric, q.expr, w))
	}
	if s.partial.take() {
		s.pending = append(s.pending, fmt.Sprintf("the answer to %s (%s) was partial (isPartial: true): some of the data was not read", q.metric, q.expr))
	}
}

// instant runs an instant query at t.
func (s *Source) instant(ctx context.Context, q query, expr string, t time.Time) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	s.partial.take()
	v, warns, _, err := s.api.Query(ctx, expr, t)
	s.noteAnswer(q, warns)
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, errors.New("want an instant vector")
	}
	return vec, nil
}
