package remotewrite

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestValidate(t *testing.T) {
	if errs := (Config{URL: "http://127.0.0.1:8428/api/v1/write"}).Validate(); len(errs) != 0 {
		t.Errorf("defaults: %v", errs)
	}
	bad := Config{
		URL: "ftp://x/", QueryURL: "http://", Headers: map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"},
		Timeout: -1, Targets: -1, SeriesPerTarget: 10, ScrapeInterval: -time.Second, Batch: -1,
		Churn: Churn{Percent: 101, Every: -time.Minute}, Retries: -1, RetryBackoff: time.Minute, VerifyWait: -1, Version: "3",
	}
	want := []string{
		"batch -1 is out of range", "churn.every -1m0s is negative", "churn.percent 101 is out of range",
		`header "X-Ok": value is not valid`, `header name "Bad Name" is not valid`,
		`query_url: "http://": host is missing`, "retries -1 is out of range", "retry_backoff 1m0s is above 5s",
		"scrape_interval -1s is below 1ms", "series_per_target 10 is out of range (400,", "targets -1 is out of range",
		"timeout -1ns is negative", `url: "ftp://x/": scheme must be http or https`, "verify_wait -1ns is negative",
		`version "3" is unknown (want 1, 2 or auto)`,
	}
	errs := bad.Validate()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q in\n%s", w, all)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(errs), len(want), all)
	}
	if errs := (Config{URL: "http://x/", Churn: Churn{Percent: 1}}).Validate(); len(errs) != 1 ||
		!strings.Contains(errs[0].Error(), "churn.every must be a positive duration") {
		t.Errorf("churn without every: %v", errs)
	}
	if strings.Contains(all, "line\nbreak") {
		t.Error("a header value is printed")
	}
}

// TestYAML: the tags are the plan's names and durations decode from
// strings, with unknown fields rejected.
func TestYAML(t *testing.T) {
	src := `
url: http://127.0.0.1:8428/api/v1/write
headers: {X-Scope-OrgID: t1}
timeout: 10s
targets: 6000
series_per_target: 900
scrape_interval: 15s
batch: 1000
churn: {percent: 1, every: 10m}
job: bench-1
query_url: http://127.0.0.1:8428
verify_wait: 1m
retries: 3
retry_backoff: 50ms
version: 1
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	want := Config{URL: "http://127.0.0.1:8428/api/v1/write", Headers: map[string]string{"X-Scope-OrgID": "t1"},
		Timeout: 10 * time.Second, Targets: 6000, SeriesPerTarget: 900, ScrapeInterval: 15 * time.Second, Batch: 1000,
		Churn: Churn{Percent: 1, Every: 10 * time.Minute}, Job: "bench-1", QueryURL: "http://127.0.0.1:8428",
		VerifyWait: time.Minute, Retries: 3, RetryBackoff: 50 * time.Millisecond, Version: "1"}
	if c.Redacted() != want.Redacted() || c.Timeout != want.Timeout || c.VerifyWait != want.VerifyWait ||
		c.RetryBackoff != want.RetryBackoff || c.Churn != want.Churn {
		t.Errorf("decoded %+v\nwant %+v", c, want)
	}
	if errs := c.Validate(); len(errs) != 0 {
		t.Error(errs)
	}
}

func TestRedacted(t *testing.T) {
	c := Config{URL: "https://user:pw@mimir.example/api/v1/push", Targets: 6000, SeriesPerTarget: 900,
		Churn: Churn{Percent: 1, Every: 10 * time.Minute}, Retries: 2, QueryURL: "https://mimir.example/prometheus",
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k3y", "X-Scope-OrgID": "tenant-1"}}
	got := c.Redacted()
	want := `remote write 1.0 to https://user:xxxxx@mimir.example/api/v1/push: 6000 targets × 900 series, ` +
		`scrape interval 15s, batch 2000, job "perflab", churn 1% every 10m0s, 2 retries, ` +
		`read back from https://mimir.example/prometheus; headers Authorization: <redacted>, ` +
		`X-Api-Key: <redacted>, X-Scope-OrgID: tenant-1`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestYAMLVersionAndNative: version takes 1, 2.0 and auto as plans write
// them, and a native_histograms block sets schema 0 (not the default).
func TestYAMLVersionAndNative(t *testing.T) {
	for src, want := range map[string]string{"version: 1": Version1, "version: 2.0": Version2, "version: auto": VersionAuto} {
		var c Config
		if err := yaml.Unmarshal([]byte("url: http://127.0.0.1:1/w\n"+src+"\nnative_histograms: {schema: 0, buckets: 8}\n"), &c); err != nil {
			t.Fatal(err)
		}
		if got := c.withDefaults().Version; got != want || len(c.Validate()) != 0 {
			t.Errorf("%s: version %q, want %q; %v", src, got, want, c.Validate())
		}
		if s := c.NativeHistograms.shape(); s.schema != 0 || s.buckets != 8 || s.obs != DefaultNativeObservations {
			t.Errorf("%s: native histograms %+v", src, s)
		}
	}
}
