package promql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestRulesFile(t *testing.T) {
	qs, err := loadRules("testdata/node-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 17 {
		t.Fatalf("%d rules, want 17", len(qs))
	}
	for i, want := range map[int]string{0: "NodeFilesystemSpaceFillingUp", 1: "NodeFilesystemSpaceFillingUp #2",
		2: "NodeFilesystemAlmostOutOfFiles", 11: "instance:node_num_cpu:sum"} {
		if qs[i].Name != want || qs[i].Type != Instant {
			t.Errorf("rule %d: %+v, want name %q", i, qs[i], want)
		}
	}
	if !strings.HasPrefix(qs[0].Expr, "(\n  node_filesystem_avail_bytes") || strings.HasSuffix(qs[0].Expr, "\n") {
		t.Errorf("multi-line expr: %q", qs[0].Expr)
	}
	if qs[11].Expr != `count without (cpu, mode) (node_cpu_seconds_total{mode="idle"})` {
		t.Errorf("record expr %q", qs[11].Expr)
	}
	d := newTestDriver(t, Config{URL: "http://127.0.0.1:1", RulesFile: "testdata/node-alerts.yml",
		Queries: []Query{{Name: "extra", Expr: "up"}}, QueryInterval: 30 * time.Second})
	if n := len(d.Names()); n != 18 || d.Names()[0] != "extra" || d.RequestsPerSecond() != 18.0/30 {
		t.Errorf("%d queries %v, %v/s", n, d.Names(), d.RequestsPerSecond())
	}
}

func TestRulesFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"not yaml", "groups: [", "cannot parse rules_file"},
		{"no groups", "foo: 1\n", "no rules"},
		{"empty group", "groups:\n  - name: g\n    rules: []\n", `group 1 ("g") has no rules`},
		{"rule problems", `groups:
  - name: g
    rules:
      - alert: A
      - record: r
        alert: B
        expr: up
      - expr: up
      - alert: C
        expr: {a: 1}
`, `:4: group "g", rule 1: expr is required, a string
:5: group "g", rule 2: want alert or record, one of them
:8: group "g", rule 3: want alert or record, one of them
:9: group "g", rule 4: expr is required, a string`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yml")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadRules(path)
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), path, ""), tc.want) {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
	if _, err := loadRules(filepath.Join(dir, "missing.yml")); err == nil || !strings.Contains(err.Error(), "cannot read rules_file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestValidate(t *testing.T) {
	errs := Config{
		URL: "ftp://x", QueryInterval: -1, Timeout: -1, Headers: map[string]string{"Bad Name": "v"},
		Queries: []Query{
			{Expr: " "},
			{Expr: "up", Range: time.Hour},
			{Expr: "up", Type: "Range"},
			{Expr: "up", Type: Range, Range: 24 * time.Hour, Step: time.Second},
			{Expr: "up", Type: Range, Step: -time.Second},
		},
	}.Validate()
	want := []string{
		`url "ftp://x": scheme must be http or https`,
		"queries[0]: expr is required",
		"queries[1]: range and step are for range queries (type: range)",
		`queries[2]: type "Range" is unknown (want instant or range)`,
		"queries[3]: range 24h0m0s / step 1s is 86400 points per series, above Prometheus' 11000",
		"queries[4]: range 0s and step -1s must be positive",
		"query_interval -1ns is negative",
		"timeout -1ns is negative",
		`header name "Bad Name" is not valid`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := (Config{URL: "http://x"}).Validate(); len(errs) != 1 || errs[0].Error() != "give queries or rules_file" {
		t.Errorf("no queries: %v", errs)
	}
	if d := (Query{Expr: "up", Type: Range, Range: 7 * 24 * time.Hour}).withDefaults(0); d.Step != 55*time.Second {
		t.Errorf("default step for 7d: %v", d.Step)
	}
}

func TestYAML(t *testing.T) {
	src := `
url: http://127.0.0.1:8428
queries:
  - {name: load, expr: node_load1}
  - {name: cpu, expr: 'rate(node_cpu_seconds_total[5m])', type: range, range: 1h, step: 30s}
rules_file: testdata/node-alerts.yml
query_interval: 15s
timeout: 10s
headers: {X-Scope-OrgID: t1}
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Queries[1].Range != time.Hour || c.Queries[1].Step != 30*time.Second || c.QueryInterval != 15*time.Second ||
		c.Timeout != 10*time.Second || c.RulesFile != "testdata/node-alerts.yml" || c.Headers["X-Scope-OrgID"] != "t1" {
		t.Errorf("decoded %+v", c)
	}
	if errs := c.Validate(); len(errs) != 0 {
		t.Error(errs)
	}
}

func TestRedacted(t *testing.T) {
	c := Config{URL: "https://u:pw@mimir.example/prometheus", Queries: []Query{{Expr: "up"}}, RulesFile: "alerts.yml",
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Scope-OrgID": "t1"}}
	want := "PromQL at https://u:xxxxx@mimir.example/prometheus: 1 queries and the rules of alerts.yml, each every 15s; " +
		"headers Authorization: <redacted>, X-Scope-OrgID: t1"
	if got := c.Redacted(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
