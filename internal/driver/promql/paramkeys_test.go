package promql

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestProblemsCarryTheirKey: each problem Validate finds carries the
// params key of the field it is about; a rules file's problems carry
// rules_file, and no queries at all is the whole config's.
func TestProblemsCarryTheirKey(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(empty, []byte("groups:\n  - name: g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key    string
		modify func(*Config)
	}{
		{"url", func(c *Config) { c.URL = "" }},
		{"url", func(c *Config) { c.URL = "ftp://x" }},
		{"url", func(c *Config) { c.URL = "http://" }},
		{"url", func(c *Config) { c.URL = "http://[::1" }},
		{"queries", func(c *Config) { c.Queries = []Query{{Expr: " "}} }},
		{"queries", func(c *Config) { c.Queries = []Query{{Expr: "up", Type: "matrix"}} }},
		{"rules_file", func(c *Config) { c.RulesFile = "/nonexistent/rules.yaml" }},
		{"rules_file", func(c *Config) { c.RulesFile = empty }},
		{"", func(c *Config) { c.Queries = nil }},
		{"query_interval", func(c *Config) { c.QueryInterval = -1 }},
		{"timeout", func(c *Config) { c.Timeout = -1 }},
		{"headers", func(c *Config) { c.Headers = map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"} }},
	} {
		c := Config{URL: "http://127.0.0.1:9090", Queries: []Query{{Expr: "up"}}}
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
