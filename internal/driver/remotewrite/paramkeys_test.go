package remotewrite

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key of the field it is about (churn.every's is churn).
func TestProblemsCarryTheirKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"url", func(c *Config) { c.URL = "" }},
		{"url", func(c *Config) { c.URL = "ftp://x/" }},
		{"query_url", func(c *Config) { c.QueryURL = "http://" }},
		{"headers", func(c *Config) { c.Headers = map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"} }},
		{"targets", func(c *Config) { c.Targets = -1 }},
		{"series_per_target", func(c *Config) { c.SeriesPerTarget = -1 }},
		{"scrape_interval", func(c *Config) { c.ScrapeInterval = -1 }},
		{"batch", func(c *Config) { c.Batch = -1 }},
		{"churn", func(c *Config) { c.Churn.Percent = 200 }},
		{"churn", func(c *Config) { c.Churn.Percent = 1 }},
		{"churn", func(c *Config) { c.Churn.Every = -1 }},
		{"timeout", func(c *Config) { c.Timeout = -1 }},
		{"verify_wait", func(c *Config) { c.VerifyWait = -1 }},
		{"retry_backoff", func(c *Config) { c.RetryBackoff = -1 }},
		{"retry_backoff", func(c *Config) { c.RetryBackoff = time.Minute }},
		{"retries", func(c *Config) { c.Retries = -1 }},
		{"version", func(c *Config) { c.Version = "3" }},
		{"version", func(c *Config) { c.Version = "two" }},
		{"native_histograms", func(c *Config) { c.NativeHistograms = &NativeHistograms{Buckets: 161} }},
		{"exemplar_percent", func(c *Config) { c.ExemplarPercent = 101 }},
		{"max_in_flight", func(c *Config) { c.MaxInFlight = -1 }},
		{"native_histograms", func(c *Config) { c.NativeHistograms = &NativeHistograms{Observations: -1} }},
		{"native_histograms", func(c *Config) { s := 9; c.NativeHistograms = &NativeHistograms{Schema: &s} }},
	} {
		c := Config{URL: "http://127.0.0.1:8428/api/v1/write"}
		tc.modify(&c)
		errs := c.Validate()
		if len(errs) == 0 {
			t.Errorf("%s: no problem with %+v", tc.key, c)
		}
		for _, err := range errs {
			if k := driver.KeyOf(err); k != tc.key {
				t.Errorf("%q carries key %q, want %q", err, k, tc.key)
			}
		}
	}
}
