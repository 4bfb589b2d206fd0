package s3driver

import (
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key of the field it is about; a problem of two fields carries
// the one the message puts first (access_key and secret_key: the one
// given).
func TestProblemsCarryTheirKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"endpoint", func(c *Config) { c.Endpoint = "" }},
		{"endpoint", func(c *Config) { c.Endpoint = "http://%zz" }},
		{"endpoint", func(c *Config) { c.Endpoint = "ftp://h" }},
		{"endpoint", func(c *Config) { c.Endpoint = "http://" }},
		{"endpoint", func(c *Config) { c.Endpoint = "http://u:p@h" }},
		{"endpoint", func(c *Config) { c.Endpoint = "http://h/bkt" }},
		{"ca_file", func(c *Config) { c.CAFile = "/nonexistent/ca.pem" }},
		{"bucket", func(c *Config) { c.Bucket = "" }},
		{"bucket", func(c *Config) { c.Bucket = "ab" }},
		{"path_style", func(c *Config) { c.PathStyle = "sometimes" }},
		{"access_key", func(c *Config) { c.AccessKey = "a" }},
		{"secret_key", func(c *Config) { c.SecretKey = "s" }},
		{"session_token", func(c *Config) { c.SessionToken = "t" }},
		{"ops", func(c *Config) { c.Ops = map[string]int{"copy": 1} }},
		{"ops", func(c *Config) { c.Ops = map[string]int{"get": -1, "put": 1} }},
		{"ops", func(c *Config) { c.Objects = 0 }},
		{"ops", func(c *Config) { c.Ops, c.Objects = map[string]int{"delete": 1}, 0 }},
		{"put_overwrite", func(c *Config) { c.Ops, c.Objects, c.PutOverwrite = map[string]int{"put": 1}, 0, true }},
		{"put_overwrite", func(c *Config) { c.Ops, c.PutOverwrite = map[string]int{"get": 1, "delete": 1}, true }},
		{"size", func(c *Config) { c.Size = "1x" }},
		{"size", func(c *Config) { c.Size = "2GiB" }},
		{"size", func(c *Config) { c.Size, c.Sizes = "1KiB", map[string]int{"1KiB": 1} }},
		{"sizes", func(c *Config) { c.Sizes = map[string]int{"1x": 1, "2GiB": 1} }},
		{"sizes", func(c *Config) { c.Sizes = map[string]int{"1KiB": -1} }},
		{"sizes", func(c *Config) { c.Sizes = map[string]int{"1KiB": 0} }},
		{"objects", func(c *Config) { c.Ops, c.Objects = map[string]int{"put": 1}, -1 }},
		{"key_prefix", func(c *Config) { c.KeyPrefix = "/abs" }},
		{"timeout", func(c *Config) { c.Timeout = "soon" }},
		{"timeout", func(c *Config) { c.Timeout = "-1s" }},
		{"link", func(c *Config) { c.Link = "fast" }},
		{"prepare_concurrency", func(c *Config) { c.PrepareConcurrency = -2 }},
	} {
		c := Config{Endpoint: "http://127.0.0.1:9000", Bucket: "bkt", Objects: 10}
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
