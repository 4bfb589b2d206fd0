package otlpdriver

import (
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key of the field it is about (search.limit's is search).
func TestProblemsCarryTheirKey(t *testing.T) {
	bad := map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"}
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"endpoint", func(c *Config) { c.Endpoint = "" }},
		{"endpoint", func(c *Config) { c.Endpoint = "tempo" }},
		{"endpoint", func(c *Config) { c.Protocol, c.Endpoint = ProtoHTTP, "ftp://tempo/" }},
		{"mode", func(c *Config) { c.Mode = "both" }},
		{"query_url", func(c *Config) { c.Mode = ModeQuery }},
		{"query_url", func(c *Config) { c.QueryURL = "ftp://tempo/" }},
		{"query_api", func(c *Config) { c.QueryAPI = "zipkin" }},
		{"protocol", func(c *Config) { c.Protocol = "udp" }},
		{"headers", func(c *Config) { c.Headers = bad }},
		{"ca_file", func(c *Config) { c.CAFile = "/nonexistent/ca.pem" }},
		{"custom", func(c *Config) { c.Custom.Depth = 3 }},
		{"custom", func(c *Config) { c.Shape, c.Custom.Spans = ShapeCustom, Range{10, 5} }},
		{"shape", func(c *Config) { c.Shape = "huge" }},
		{"batch", func(c *Config) { c.Batch = -1 }},
		{"timeout", func(c *Config) { c.Timeout = -1 }},
		{"delay", func(c *Config) { c.Delay = -1 }},
		{"verify_wait", func(c *Config) { c.VerifyWait = -1 }},
		{"search", func(c *Config) { c.Search.Lookback = -1 }},
		{"search", func(c *Config) { c.Search.Limit = -1 }},
		{"conns", func(c *Config) { c.Conns = 2000 }},
		{"id_ring", func(c *Config) { c.IDRing = -1 }},
		{"verify_sample", func(c *Config) { c.VerifySample = -1 }},
		{"queries", func(c *Config) { c.Queries = []string{OpSearch} }},
		{"queries", func(c *Config) { c.Mode, c.QueryURL, c.Queries = ModeQuery, "http://tempo", []string{"scan"} }},
	} {
		c := Config{Endpoint: "127.0.0.1:4317"}
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
