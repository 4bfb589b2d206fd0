package remotewrite

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
)

// Defaults, in one place (Config.withDefaults).
const (
	DefaultTargets         = 10
	DefaultSeriesPerTarget = 1000
	DefaultScrapeInterval  = 15 * time.Second
	DefaultBatch           = 2000 // Prometheus' queue_config.max_samples_per_send
	DefaultTimeout         = 30 * time.Second
	DefaultJob             = "perflab"
	DefaultRetryBackoff    = 30 * time.Millisecond // Prometheus' queue_config.min_backoff
	DefaultVerifyWait      = 45 * time.Second      // VictoriaMetrics hides samples younger than 30 s by default
	DefaultMaxInFlight     = 50                    // Prometheus' queue_config.max_shards: one request in flight per shard
)

// Limits Validate enforces, so that a typo cannot ask for a terabyte.
const (
	maxTargets         = 10_000_000
	maxSeriesPerTarget = 1_000_000
	maxBatch           = 1_000_000
	maxRetries         = 100
	maxInFlight        = 10_000
	maxRetryBackoff    = 5 * time.Second // Prometheus' queue_config.max_backoff; also the backoff's cap
)

// Churn replaces Percent of the targets every Every with new ones: new
// instance label values, so new series, as when pods are redeployed.
type Churn struct {
	Percent float64       `yaml:"percent"` // share of targets replaced each time, 0–100
	Every   time.Duration `yaml:"every"`   // how often
}

// Config describes the series a Driver generates and where it writes them.
// Field tags are the names plans use. Durations are time.Duration, which
// go.yaml.in/yaml/v3 fills from strings like "15s". Zero values mean the
// defaults.
type Config struct {
	URL     string            `yaml:"url"`     // the receiver's write endpoint, e.g. http://127.0.0.1:8428/api/v1/write
	Headers map[string]string `yaml:"headers"` // sent with every request (writes and read-back queries); a Host entry sets the Host header
	Timeout time.Duration     `yaml:"timeout"` // one request, connect to end of response

	Targets         int           `yaml:"targets"`           // node_exporter-like targets
	SeriesPerTarget int           `yaml:"series_per_target"` // approximated (±4) by scaling CPUs, disks, filesystems, interfaces
	ScrapeInterval  time.Duration `yaml:"scrape_interval"`   // every series gets one sample per interval at the natural rate
	Batch           int           `yaml:"batch"`             // most samples in one request
	Churn           Churn         `yaml:"churn"`
	Job             string        `yaml:"job"` // the job label of every series; make it unique per run for an exact read-back

	QueryURL     string        `yaml:"query_url"`     // Prometheus API base for Verify, e.g. http://127.0.0.1:9090; empty: no read-back
	VerifyWait   time.Duration `yaml:"verify_wait"`   // how long Verify waits for written data to become visible
	Retries      int           `yaml:"retries"`       // resend a batch answered 5xx or 429, or not sent for a connect error, up to this many times
	RetryBackoff time.Duration `yaml:"retry_backoff"` // wait before the first retry, doubled for each next one, at most 5 s
	Version      string        `yaml:"version"`       // "1" (remote write 1.0), "2" (2.0) or "auto" (2.0, falling back to 1.0 on 415)

	NativeHistograms *NativeHistograms `yaml:"native_histograms"` // nil: classic histograms only
	ExemplarPercent  float64           `yaml:"exemplar_percent"`  // share of counter and native histogram samples with an exemplar (trace_id), 0–100

	// MaxInFlight bounds the requests built or in flight at once, as
	// Prometheus' max_shards does: a VU beyond it waits (its latency,
	// from its intended start, shows the wait) holding no request, so
	// that a generator or target that falls behind costs arrivals
	// (dropped once every VU waits), never memory.
	MaxInFlight int `yaml:"max_in_flight"`
}

// Protocol versions Config.Version takes.
const (
	Version1    = "1"
	Version2    = "2"
	VersionAuto = "auto"
)

// version is Config.Version in its canonical form ("1.0" is "1"), or ""
// when it is none of them.
func version(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "1.0":
		return Version1
	case "2", "2.0":
		return Version2
	case VersionAuto:
		return VersionAuto
	}
	return ""
}

// ParamKeys declares which params say where the system is (the write
// endpoint, the API read back from, headers such as a tenant's) and which
// hold credentials (credential-named headers).
func (Config) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{
		Place:   []string{"url", "query_url", "headers"},
		Headers: []string{"headers"},
	}
}

// withDefaults fills in every default in one place.
func (c Config) withDefaults() Config {
	setDefault(&c.Targets, DefaultTargets)
	setDefault(&c.SeriesPerTarget, DefaultSeriesPerTarget)
	setDefault(&c.ScrapeInterval, DefaultScrapeInterval)
	setDefault(&c.Batch, DefaultBatch)
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.Job, DefaultJob)
	setDefault(&c.RetryBackoff, DefaultRetryBackoff)
	setDefault(&c.VerifyWait, DefaultVerifyWait)
	setDefault(&c.MaxInFlight, DefaultMaxInFlight)
	setDefault(&c.Version, Version1)
	if v := version(c.Version); v != "" {
		c.Version = v
	}
	return c
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate reports every problem with c at once; nil means New accepts it.
func (c Config) Validate() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	if c.URL == "" {
		add("url", "url is required")
	} else if err := checkURL(c.URL); err != nil {
		add("url", "url: %v", err)
	}
	if c.QueryURL != "" {
		if err := checkURL(c.QueryURL); err != nil {
			add("query_url", "query_url: %v", err)
		}
	}
	errs = append(errs, checkHeaders(c.Headers)...)
	d := c.withDefaults()
	if d.Targets < 1 || d.Targets > maxTargets {
		add("targets", "targets %d is out of range (1 to %d)", c.Targets, maxTargets)
	}
	if lo := minSeriesPerTarget(); d.SeriesPerTarget < lo || d.SeriesPerTarget > maxSeriesPerTarget {
		add("series_per_target", "series_per_target %d is out of range (%d, the smallest node_exporter-like target, to %d)",
			c.SeriesPerTarget, lo, maxSeriesPerTarget)
	}
	if d.ScrapeInterval < time.Millisecond {
		add("scrape_interval", "scrape_interval %v is below 1ms", c.ScrapeInterval)
	}
	if d.Batch < 1 || d.Batch > maxBatch {
		add("batch", "batch %d is out of range (1 to %d)", c.Batch, maxBatch)
	}
	errs = append(errs, c.checkChurn()...)
	for name, v := range map[string]time.Duration{"timeout": c.Timeout, "verify_wait": c.VerifyWait, "retry_backoff": c.RetryBackoff} {
		if v < 0 {
			add(name, "%s %v is negative", name, v)
		}
	}
	if c.RetryBackoff > maxRetryBackoff {
		add("retry_backoff", "retry_backoff %v is above %v", c.RetryBackoff, maxRetryBackoff)
	}
	if d.MaxInFlight < 1 || d.MaxInFlight > maxInFlight {
		add("max_in_flight", "max_in_flight %d is out of range (1 to %d)", c.MaxInFlight, maxInFlight)
	}
	if c.Retries < 0 || c.Retries > maxRetries {
		add("retries", "retries %d is out of range (0 to %d)", c.Retries, maxRetries)
	}
	if c.NativeHistograms != nil {
		for _, e := range c.NativeHistograms.check() {
			add("native_histograms", "%s", e)
		}
	}
	if p := c.ExemplarPercent; p < 0 || p > 100 || math.IsNaN(p) {
		add("exemplar_percent", "exemplar_percent %v is out of range (0 to 100)", p)
	}
	if version(d.Version) == "" {
		add("version", "version %q is unknown (want 1, 2 or auto)", c.Version)
	}
	return sortErrors(errs)
}

// checkChurn checks the churn block.
func (c Config) checkChurn() []error {
	var errs []error
	switch p := c.Churn.Percent; {
	case p < 0 || p > 100 || math.IsNaN(p):
		errs = append(errs, driver.ParamErrorf("churn", "churn.percent %v is out of range (0 to 100)", p))
	case p > 0 && c.Churn.Every <= 0:
		errs = append(errs, driver.ParamErrorf("churn", "churn.every must be a positive duration when churn.percent is set"))
	}
	if c.Churn.Every < 0 {
		errs = append(errs, driver.ParamErrorf("churn", "churn.every %v is negative", c.Churn.Every))
	}
	return errs
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("cannot parse %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", s)
	case u.Host == "":
		return fmt.Errorf("%q: host is missing", secret.URL(s))
	case driver.BadPort(u) != "":
		return fmt.Errorf("%q: %s", secret.URL(s), driver.BadPort(u))
	}
	return nil
}

func checkHeaders(h map[string]string) []error {
	var errs []error
	for name, v := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			errs = append(errs, driver.ParamErrorf("headers", "header name %q is not valid", name))
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			errs = append(errs, driver.ParamErrorf("headers", "header %q: value is not valid", name)) // the value may be a secret
		}
	}
	return errs
}

// sortErrors orders errors by text, so that map iteration cannot reorder
// what Validate reports.
func sortErrors(errs []error) []error {
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// Redacted describes c for people and storage: the load it generates and
// where it goes, with the password in URLs and the values of secret
// headers (Authorization, tokens, keys, cookies, …) masked.
func (c Config) Redacted() string {
	d := c.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "remote write %s to %s: %d targets × %d series, scrape interval %v, batch %d, job %q",
		versionName(d.Version), secret.URL(d.URL), d.Targets, d.SeriesPerTarget, d.ScrapeInterval, d.Batch, d.Job)
	if d.Churn.Percent > 0 {
		fmt.Fprintf(&b, ", churn %v%% every %v", d.Churn.Percent, d.Churn.Every)
	}
	if n := d.NativeHistograms; n != nil {
		s := n.shape()
		fmt.Fprintf(&b, ", native histograms (schema %d, %d buckets, %v observations per interval)", s.schema, s.buckets, s.obs)
	}
	if d.ExemplarPercent > 0 {
		fmt.Fprintf(&b, ", exemplars on %v%% of counter and native histogram samples", d.ExemplarPercent)
	}
	if c.MaxInFlight != 0 {
		fmt.Fprintf(&b, ", at most %d requests in flight", c.MaxInFlight)
	}
	if d.Retries > 0 {
		fmt.Fprintf(&b, ", %d retries", d.Retries)
	}
	if d.QueryURL != "" {
		fmt.Fprintf(&b, ", read back from %s", secret.URL(d.QueryURL))
	}
	dial.DescribeHeaders(&b, d.Headers)
	return b.String()
}

// versionName names a canonical Config.Version for people.
func versionName(v string) string {
	switch v {
	case Version2:
		return "2.0"
	case VersionAuto:
		return "2.0 (1.0 if refused)"
	}
	return "1.0"
}
