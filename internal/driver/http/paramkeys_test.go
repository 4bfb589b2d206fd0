package httpdriver

import (
	"net/http"
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key (the http driver's yaml keys) of the field it is about.
func TestProblemsCarryTheirKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"url", func(c *Config) { c.URL = "" }},
		{"url", func(c *Config) { c.URL = "127.0.0.1:8080" }},
		{"url", func(c *Config) { c.URL = "ftp://127.0.0.1/" }},
		{"url", func(c *Config) { c.URL = "http:///path" }},
		{"url", func(c *Config) { c.URL = "http://[::1" }},
		{"method", func(c *Config) { c.Method = "G T" }},
		{"headers", func(c *Config) { c.Header = http.Header{"Bad Name": {"v"}} }},
		{"headers", func(c *Config) { c.Header = http.Header{"X-Ok": {"line\nbreak"}} }},
		{"proto", func(c *Config) { c.Proto = "h3" }},
		{"proto", func(c *Config) { c.Proto = ProtoH2 }},
		{"proto", func(c *Config) { c.URL, c.Proto = "https://127.0.0.1/", ProtoH2C }},
		{"timeout", func(c *Config) { c.Timeout = -1 }},
		{"max_conns", func(c *Config) { c.MaxConns = -1 }},
		{"ca_file", func(c *Config) { c.CAFile = "/nonexistent/ca.pem" }},
	} {
		c := Config{URL: "http://127.0.0.1/"}
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
