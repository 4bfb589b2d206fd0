package s3driver

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestValidateMissingEndpointAndBucket(t *testing.T) {
	errs := Config{}.Validate()
	got := errors.Join(errs...).Error()
	for _, want := range []string{"endpoint is required", "bucket is required",
		"ops get and head read the objects Prepare uploads: set objects"} {
		if !strings.Contains(got, want) {
			t.Errorf("Validate() = %q, want it to say %q", got, want)
		}
	}
}

// TestValidateReportsEverything: one Config with many problems gets one
// error each, and none shows a secret.
func TestValidateReportsEverything(t *testing.T) {
	c := Config{
		Endpoint: "ftp://user:hunter2@host/path", Bucket: "ab", PathStyle: "sometimes",
		SecretKey: "hunter2", Ops: map[string]int{"get": 1, "copy": 1, "put": -1}, Size: "4MiB",
		Sizes: map[string]int{"1x": 1}, Objects: -1, Timeout: "soon", Link: "fast",
		PutOverwrite: true, PrepareConcurrency: -2, KeyPrefix: "/abs",
	}
	errs := c.Validate()
	want := []string{
		`endpoint "ftp://user:xxxxx@host/path": scheme must be http or https`,
		`bucket "ab" is not a valid bucket name`,
		`path_style "sometimes" is unknown`,
		`access_key and secret_key go together`,
		`ops: unknown operation "copy"`,
		`ops: weight -1 of put is negative`,
		`give size or sizes, not both`,
		`cannot parse size "1x"`,
		`objects -1 must be between 0 and`,
		`ops get and head read the objects Prepare uploads`,
		`put_overwrite overwrites the prepared objects: set objects`,
		`cannot parse timeout "soon"`,
		`cannot parse link "fast"`,
		`prepare_concurrency -2 is negative`,
		`key_prefix "/abs" is not a valid key prefix`,
	}
	all := errors.Join(errs...).Error()
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q in:\n%s", w, all)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(errs), len(want), all)
	}
	if strings.Contains(all, "hunter2") {
		t.Errorf("an error shows the secret:\n%s", all)
	}
}

func TestValidateOK(t *testing.T) {
	c := Config{Endpoint: "https://s3.example.com", Bucket: "bucket", Objects: 10,
		Ops: map[string]int{"get": 80, "put": 15, "delete": 5}, Sizes: map[string]int{"1KiB": 50, "100KiB": 30, "1MiB": 20},
		Link: "10Gbps", PathStyle: PathStyleFalse, AccessKey: "a", SecretKey: "b", Timeout: "1s"}
	if errs := c.Validate(); errs != nil {
		t.Fatal(errs)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.PutOverwrite = true }, // with delete
		func(c *Config) { c.Ops = map[string]int{"delete": 1}; c.Objects = 0 },
		func(c *Config) { c.Endpoint = "http://host:9000/bucket" },
		func(c *Config) { c.CAFile = "/nonexistent.pem" },
		func(c *Config) { c.Size = "2GiB"; c.Sizes = nil },
		func(c *Config) { c.Ops = map[string]int{"get": 0} },
		func(c *Config) { c.Timeout = "-1s" },
		func(c *Config) { c.SessionToken = "t"; c.AccessKey, c.SecretKey = "", "" },
	} {
		cc := c
		bad(&cc)
		if errs := cc.Validate(); len(errs) != 1 {
			t.Errorf("%s: %d errors %v, want 1", cc.Redacted(), len(errs), errs)
		}
	}
}

func TestParseLink(t *testing.T) {
	for in, want := range map[string]float64{
		"10Gbps": 1.25e9, "100 Mbps": 12.5e6, "1Gbit/s": 125e6, "1.25GB/s": 1.25e9, "100MiB/s": 100 << 20, "8bps": 1,
	} {
		got, err := parseLink(in)
		if err != nil || math.Abs(got-want) > 1e-6*want {
			t.Errorf("parseLink(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "0Gbps", "-1Gbps", "10 furlongs", "Gbps"} {
		if _, err := parseLink(in); err == nil {
			t.Errorf("parseLink(%q) accepted", in)
		}
	}
}

// TestYAML: the params of a plan decode strictly into Config.
func TestYAML(t *testing.T) {
	const doc = `
endpoint: http://127.0.0.1:7070
bucket: cache
create_bucket: true
region: eu-west-1
access_key: ${AK}
secret_key: ${SK}
path_style: true
ops: {get: 80, put: 15, delete: 5}
sizes: {1KiB: 50, 100KiB: 30, 1MiB: 20}
objects: 1000
key_prefix: bench
timeout: 10s
insecure: false
link: 10Gbps
seed: 7
`
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.PathStyle != PathStyleTrue || c.Ops["get"] != 80 || c.Sizes["1MiB"] != 20 || c.Objects != 1000 || c.Seed != 7 {
		t.Errorf("decoded %+v", c.Redacted())
	}
	if errs := c.Validate(); errs != nil {
		t.Error(errs)
	}
	bad := yaml.NewDecoder(strings.NewReader("bucket: b\nsize_typo: 1KiB\n"))
	bad.KnownFields(true)
	if err := bad.Decode(&Config{}); err == nil {
		t.Error("unknown field accepted")
	}
}

// TestNoSecretsShown: Redacted, %v, %+v, %#v and Facts show no credential.
func TestNoSecretsShown(t *testing.T) {
	c := Config{Endpoint: "http://127.0.0.1:9", Bucket: "bkt", Objects: 3, AccessKey: "AKIDSECRETID",
		SecretKey: "sk-very-secret", SessionToken: "token-secret", Link: "1Gbps"}
	d := newDriver(t, c)
	var facts strings.Builder
	for _, f := range d.Facts() {
		fmt.Fprintf(&facts, "%s=%s\n", f.Name, f.Value)
	}
	for _, s := range []string{c.Redacted(), fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), facts.String()} {
		for _, secret := range []string{"AKIDSECRETID", "sk-very-secret", "token-secret"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %q", s, secret)
			}
		}
	}
	for _, want := range []string{"link=1 Gbps", "link_bytes_per_second=125000000", "link_bound_bytes_per_second=112500000",
		"ops=GET", "object_size=1 MiB", "credentials=config"} {
		if !strings.Contains(facts.String(), want) {
			t.Errorf("facts lack %q:\n%s", want, facts.String())
		}
	}
}

func TestCredentialsFromEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "envkey")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
	t.Setenv("AWS_REGION", "eu-north-1")
	d := newDriver(t, Config{Endpoint: "http://127.0.0.1:9", Bucket: "bkt", Objects: 1})
	if d.cfg.AccessKey != "envkey" || d.cfg.Region != "eu-north-1" || !strings.HasPrefix(d.creds, "environment") {
		t.Errorf("credentials %q, region %q", d.creds, d.cfg.Region)
	}
	if !strings.HasPrefix(d.prefix, "perflab-") || len(d.prefix) != len("perflab-")+12+1 {
		t.Errorf("default prefix %q", d.prefix)
	}
}

// TestWriteBufferIsLargeOnlyForPuts: a connection's 64 KiB write buffer
// serves PUT bodies; a load without PUT writes headers only and gets 4 KiB.
func TestWriteBufferIsLargeOnlyForPuts(t *testing.T) {
	for _, c := range []struct {
		ops  map[string]int
		want int
	}{{map[string]int{"get": 1}, readBufferSize}, {map[string]int{"get": 3, "head": 1}, readBufferSize},
		{map[string]int{"put": 1}, writeBufferSize}, {map[string]int{"get": 9, "put": 1}, writeBufferSize}} {
		d, err := New(Config{Endpoint: "http://127.0.0.1:1", Bucket: "bench", Objects: 1, Ops: c.ops})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.rt.WriteBufferSize; got != c.want {
			t.Errorf("ops %v: write buffer %d, want %d", c.ops, got, c.want)
		}
	}
}
