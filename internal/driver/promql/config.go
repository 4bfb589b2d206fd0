package promql

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
)

// Query types.
const (
	Instant = "instant"
	Range   = "range"
)

// Defaults, in one place (Config.withDefaults, Query.withDefaults).
const (
	DefaultQueryInterval = 15 * time.Second
	DefaultTimeout       = 30 * time.Second
	DefaultRange         = time.Hour
	DefaultStep          = 15 * time.Second
)

// maxPoints is Prometheus' limit on points per series of a range query.
const maxPoints = 11000

// Query is one PromQL query. Field tags are the names plans use.
type Query struct {
	Name  string        `yaml:"name"`  // the operation name; default the expression when short, else "query N"
	Expr  string        `yaml:"expr"`  // PromQL
	Type  string        `yaml:"type"`  // instant (default) or range
	Range time.Duration `yaml:"range"` // range queries: from now-range to now; default 1h
	Step  time.Duration `yaml:"step"`  // range queries: resolution; default 15s, or coarser to stay within 11,000 points
}

// Config describes the queries a Driver runs and where. Durations are
// time.Duration, which go.yaml.in/yaml/v3 fills from strings like "15s".
// Zero values mean the defaults.
type Config struct {
	URL           string            `yaml:"url"`            // Prometheus API base, e.g. http://127.0.0.1:9090; /api/v1/query is appended
	Queries       []Query           `yaml:"queries"`        // run in turn, one per operation
	RulesFile     string            `yaml:"rules_file"`     // Prometheus rules file: every rule's expr as an instant query, after Queries
	QueryInterval time.Duration     `yaml:"query_interval"` // each query runs once per interval at the natural rate
	Timeout       time.Duration     `yaml:"timeout"`        // one query, connect to end of response
	Headers       map[string]string `yaml:"headers"`        // sent with every query; a Host entry sets the Host header
}

func (c Config) withDefaults() Config {
	if c.QueryInterval == 0 {
		c.QueryInterval = DefaultQueryInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// ParamKeys declares which params say where the system is (its API and
// headers such as a tenant's) and which hold credentials (credential-named
// headers).
func (Config) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{
		Place:   []string{"url", "headers"},
		Headers: []string{"headers"},
	}
}

// withDefaults fills in a query's defaults; i is its place in the list.
func (q Query) withDefaults(i int) Query {
	if q.Type == "" {
		q.Type = Instant
	}
	if q.Name == "" {
		q.Name = strings.Join(strings.Fields(q.Expr), " ")
		if len(q.Name) > 60 || q.Name == "" {
			q.Name = "query " + strconv.Itoa(i+1)
		}
	}
	if q.Type == Range {
		if q.Range == 0 {
			q.Range = DefaultRange
		}
		if q.Step == 0 {
			q.Step = max(DefaultStep, (q.Range/maxPoints).Truncate(time.Second)+time.Second)
		}
	}
	return q
}

// Validate reports every problem with c at once, including those of its
// rules file; nil means New accepts it.
func (c Config) Validate() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	if c.URL == "" {
		add("url", "url is required")
	} else if u, err := url.Parse(c.URL); err != nil {
		add("url", "cannot parse url: %w", err)
	} else if u.Scheme != "http" && u.Scheme != "https" {
		add("url", "url %q: scheme must be http or https", c.URL)
	} else if u.Host == "" {
		add("url", "url %q: host is missing", secret.URL(c.URL))
	} else if why := driver.BadPort(u); why != "" {
		add("url", "url %q: %s", secret.URL(c.URL), why)
	}
	for i, q := range c.Queries {
		for _, err := range q.validate() {
			add("queries", "queries[%d]: %w", i, err)
		}
	}
	if c.RulesFile != "" {
		if _, err := loadRules(c.RulesFile); err != nil {
			errs = append(errs, driver.WithKey("rules_file", err))
		}
	} else if len(c.Queries) == 0 {
		add("", "give queries or rules_file")
	}
	if c.QueryInterval < 0 {
		add("query_interval", "query_interval %v is negative", c.QueryInterval)
	}
	if c.Timeout < 0 {
		add("timeout", "timeout %v is negative", c.Timeout)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Headers)) {
		if !httpguts.ValidHeaderFieldName(n) {
			add("headers", "header name %q is not valid", n)
		}
		if !httpguts.ValidHeaderFieldValue(c.Headers[n]) {
			add("headers", "header %q: value is not valid", n) // the value may be a secret
		}
	}
	return errs
}

func (q Query) validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if strings.TrimSpace(q.Expr) == "" {
		add("expr is required")
	}
	switch q.Type {
	case "", Instant:
		if q.Range != 0 || q.Step != 0 {
			add("range and step are for range queries (type: range)")
		}
	case Range:
		if q.Range < 0 || q.Step < 0 {
			add("range %v and step %v must be positive", q.Range, q.Step)
			break
		}
		if d := q.withDefaults(0); d.Range/d.Step > maxPoints {
			add("range %v / step %v is %d points per series, above Prometheus' %d", d.Range, d.Step, d.Range/d.Step, maxPoints)
		}
	default:
		add("type %q is unknown (want instant or range)", q.Type)
	}
	return errs
}

// Redacted describes c for people and storage: the queries and where they
// go, with the credentials in the URL (secret.URL) and the values of secret headers
// (Authorization, tokens, keys, cookies, …) masked.
func (c Config) Redacted() string {
	d := c.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "PromQL at %s: ", secret.URL(d.URL))
	if len(d.Queries) > 0 {
		fmt.Fprintf(&b, "%d queries", len(d.Queries))
		if d.RulesFile != "" {
			b.WriteString(" and ")
		}
	}
	if d.RulesFile != "" {
		fmt.Fprintf(&b, "the rules of %s", d.RulesFile)
	}
	fmt.Fprintf(&b, ", each every %v", d.QueryInterval)
	dial.DescribeHeaders(&b, d.Headers)
	return b.String()
}
