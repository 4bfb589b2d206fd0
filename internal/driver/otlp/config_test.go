package otlpdriver

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func errStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Config{
		Endpoint: "127.0.0.1", Protocol: "thrift", Headers: map[string]string{"bad name": "x", "X-Key": "a\nb"},
		Timeout: -time.Second, Conns: -1, Shape: "huge", Batch: -2, QueryURL: "ftp://x", QueryAPI: "zipkin",
		Delay: -time.Second, Queries: []string{"scan"}, IDRing: -1, VerifySample: -1, VerifyWait: -time.Second,
		Search: SearchParams{Limit: -1, Lookback: -time.Minute}, CAFile: "/nonexistent/ca.pem",
	}
	got := errStrings(c.Validate())
	for _, want := range []string{
		`protocol "thrift" is unknown`, `header name "bad name"`, `header "X-Key": value is not valid`,
		"timeout -1s is negative", "conns -1 is negative", `shape "huge" is unknown`, "batch -2",
		`query_url "ftp://x": scheme must be http or https`, `query_api "zipkin" is unknown`,
		"delay -1s is negative", `queries: "scan" is unknown`, "queries are for query mode",
		"id_ring -1 is negative", "verify_sample -1 is negative", "verify_wait -1s is negative", "search.limit -1 is negative",
		"search.lookback -1m0s is negative", "cannot read ca file",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no error containing %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "a\nb") }) {
		t.Error("a header value, which may be a secret, is in an error message")
	}
	// A grpc endpoint without a port is refused too; the protocol was bad above.
	if errs := (Config{Endpoint: "127.0.0.1"}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "want host:port") {
		t.Errorf("grpc endpoint without port: %v", errs)
	}
	if errs := (Config{}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "endpoint is required") {
		t.Errorf("empty config: %v", errs)
	}
	if errs := (Config{Mode: ModeQuery}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "query_url is required") {
		t.Errorf("query mode without query_url: %v", errs)
	}
	if errs := (Config{Mode: "both"}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `mode "both"`) {
		t.Errorf("unknown mode: %v", errs)
	}
	custom := Config{Endpoint: "127.0.0.1:4317", Custom: ShapeParams{Depth: 3}}
	if errs := custom.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "need shape: custom") {
		t.Errorf("custom params with a named shape: %v", errs)
	}
	custom.Shape, custom.Custom.Spans = ShapeCustom, Range{10, 5}
	if errs := custom.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "custom: spans") {
		t.Errorf("bad custom spans: %v", errs)
	}
}

func TestGRPCTarget(t *testing.T) {
	for _, tc := range []struct {
		in, hostport string
		tls, bad     bool
	}{
		{in: "127.0.0.1:4317", hostport: "127.0.0.1:4317"},
		{in: "http://tempo:4317", hostport: "tempo:4317"},
		{in: "https://tempo.example.com:443/", hostport: "tempo.example.com:443", tls: true},
		{in: "grpc://tempo:4317", bad: true},
		{in: "tempo", bad: true},
		{in: "http://tempo:4317/v1/traces", bad: true},
	} {
		hp, useTLS, err := grpcTarget(tc.in)
		if (err != nil) != tc.bad || hp != tc.hostport || useTLS != tc.tls {
			t.Errorf("grpcTarget(%q) = %q, %v, %v", tc.in, hp, useTLS, err)
		}
	}
	if got := tracesURL("http://127.0.0.1:4318"); got != "http://127.0.0.1:4318/v1/traces" {
		t.Errorf("tracesURL without path = %q", got)
	}
	if got := tracesURL("https://gw/otlp/v1/traces"); got != "https://gw/otlp/v1/traces" {
		t.Errorf("tracesURL with a path = %q", got)
	}
}

func TestDefaultsAndRedacted(t *testing.T) {
	c := Config{Endpoint: "127.0.0.1:4317", Headers: map[string]string{"Authorization": "Bearer s3cret"},
		QueryURL: "http://user:pw@tempo:3200"}.withDefaults()
	if c.Mode != ModeIngest || c.Protocol != ProtoGRPC || c.Shape != ShapeMedium || c.Batch != 1 ||
		c.Timeout != DefaultTimeout || c.Delay != DefaultDelay || c.VerifyWait != DefaultVerifyWait || c.QueryAPI != APITempo ||
		!reflect.DeepEqual(c.Queries, []string{OpTraceByID, OpSearch}) ||
		c.Search.Query != `{ resource.service.name = "frontend" }` || c.Search.Service != "frontend" {
		t.Errorf("defaults: %+v", c)
	}
	r := c.Redacted()
	if r.Headers["Authorization"] != "REDACTED" || strings.Contains(r.QueryURL, "pw") {
		t.Errorf("Redacted kept a secret: %v %s", r.Headers, r.QueryURL)
	}
	if c.Headers["Authorization"] != "Bearer s3cret" {
		t.Error("Redacted changed the original's headers")
	}
}

// TestConfigFromYAML decodes a plan-like params block strictly, durations
// as strings, and checks that it validates.
func TestConfigFromYAML(t *testing.T) {
	const doc = `
mode: ingest
endpoint: http://127.0.0.1:4318
protocol: http
headers: {X-Scope-OrgID: tenant-1}
timeout: 3s
shape: custom
custom:
  spans: {min: 5, max: 9}
  depth: 3
  services: [gateway, orders]
  attributes: {min: 4, max: 6}
  attribute_size: {min: 10, max: 20}
  resource_attributes: 5
  span_duration: {min: 10ms, max: 2s}
  error_rate: 0.05
batch: 4
seed: 9
query_url: http://127.0.0.1:3200
query_api: tempo
delay: 2s
id_ring: 1000
verify_sample: 50
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if errs := c.Validate(); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	if c.Timeout != 3*time.Second || c.Custom.SpanDuration.Max != 2*time.Second || c.Delay != 2*time.Second ||
		c.Custom.Spans != (Range{5, 9}) || c.Batch != 4 || c.Headers["X-Scope-OrgID"] != "tenant-1" {
		t.Errorf("decoded %+v", c)
	}
	var bad Config
	dec = yaml.NewDecoder(strings.NewReader("endpoint: x:1\nbatchsize: 3\n"))
	dec.KnownFields(true)
	if err := dec.Decode(&bad); err == nil {
		t.Error("an unknown key decoded")
	}
}
