package registry

import (
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	httpdriver "github.com/perflab/perflab/internal/driver/http"
	openaidriver "github.com/perflab/perflab/internal/driver/openai"
	otlpdriver "github.com/perflab/perflab/internal/driver/otlp"
	"github.com/perflab/perflab/internal/driver/promql"
	"github.com/perflab/perflab/internal/driver/remotewrite"
	s3driver "github.com/perflab/perflab/internal/driver/s3"
)

// TestDriversDeclareKeys: every driver a plan can name declares the params
// that say where the system is, and each key it declares (place, secret,
// headers) is a param of the struct its params decode into, so a renamed
// param fails here rather than quietly falling out of compare's notes or
// of what is scrubbed.
func TestDriversDeclareKeys(t *testing.T) {
	for name, d := range drivers {
		k := d.params.ParamKeys()
		if len(k.Place) == 0 {
			t.Errorf("driver %s declares no place keys", name)
		}
		params := yamlKeys(reflect.TypeOf(d.params))
		for what, keys := range map[string][]string{"place": k.Place, "secret": k.Secret, "headers": k.Headers} {
			for _, key := range keys {
				if _, ok := params[key]; !ok {
					t.Errorf("driver %s declares %s key %q, which is not one of its params (%s)", name, what, key, strings.Join(slices.Sorted(maps.Keys(params)), ", "))
				}
			}
		}
		for _, key := range k.Headers {
			if f := params[key]; f.Kind() != reflect.Map && !(f.Kind() == reflect.Struct && f.Field(0).Type.Kind() == reflect.Map) {
				t.Errorf("driver %s: headers key %q is a %v, not a mapping", name, key, f)
			}
		}
		if got := d.keys(); d.gateway != slices.Contains(got.Place, "gateway") {
			t.Errorf("driver %s: gateway %v, place keys %v", name, d.gateway, got.Place)
		}
	}
	isPlace := func(name, key string) bool { return slices.Contains(PlaceKeys(name), key) }
	if !isPlace("remote_write", "query_url") || !isPlace("s3", "secret_key") || isPlace("remote_write", "targets") ||
		PlaceKeys("nope") != nil {
		t.Errorf("PlaceKeys does not follow the declarations")
	}
}

// yamlKeys maps the top-level keys a struct decodes from to their types.
func yamlKeys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			out[strings.ToLower(f.Name)] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

// validator is a driver's Config.
type validator interface{ Validate() []error }

// badConfigs are configs of every driver with most problems its Validate
// can find.
func badConfigs() map[string][]validator {
	hot, missing := 3.0, "/nonexistent/ca.pem"
	bad := map[string]string{"Bad Name": "v", "X-Ok": "line\nbreak"}
	return map[string][]validator{
		"http": {httpdriver.Config{}, httpdriver.Config{URL: "ftp://x/", Method: "G T", Proto: "h3", Timeout: -1, MaxConns: -1,
			CAFile: missing, Header: http.Header{"Bad Name": {"v"}, "X-Ok": {"line\nbreak"}}},
			httpdriver.Config{URL: "http://x/", Proto: httpdriver.ProtoH2}, httpdriver.Config{URL: "x:1"}},
		"openai": {openaidriver.Config{}, openaidriver.Config{URL: "ftp://x", Endpoint: "images", MaxTokens: -1, Temperature: &hot,
			Timeout: -1, Headers: bad, APIKey: "sk\n", Prompts: []string{"a"}, PromptsFile: "p.jsonl"},
			openaidriver.Config{Endpoint: openaidriver.EndpointEmbeddings, Stream: true, PromptsFile: "/nonexistent/p.jsonl"}},
		"otlp": {otlpdriver.Config{}, otlpdriver.Config{Mode: otlpdriver.ModeQuery}, otlpdriver.Config{Mode: "both", QueryURL: "ftp://x",
			QueryAPI: "x", Headers: bad, CAFile: missing, Timeout: -1, Delay: -1, VerifyWait: -1, Conns: 2000, IDRing: -1,
			VerifySample: -1, Search: otlpdriver.SearchParams{Lookback: -1, Limit: -1}, Queries: []string{"x"}},
			otlpdriver.Config{Endpoint: "x", Protocol: "x", Shape: "x", Batch: -1, Queries: []string{"search"}},
			otlpdriver.Config{Endpoint: "ftp://x", Protocol: otlpdriver.ProtoHTTP, Custom: otlpdriver.ShapeParams{Depth: 3}},
			otlpdriver.Config{Endpoint: "x:1", Shape: otlpdriver.ShapeCustom, Custom: otlpdriver.ShapeParams{Spans: otlpdriver.Range{Min: 10, Max: 5}}}},
		"promql": {promql.Config{}, promql.Config{URL: "http://x", RulesFile: "/nonexistent/rules.yaml"},
			promql.Config{URL: "ftp://x", Queries: []promql.Query{{Type: "x"}}, QueryInterval: -1, Timeout: -1, Headers: bad}},
		"remote_write": {remotewrite.Config{}, remotewrite.Config{URL: "http://x", Churn: remotewrite.Churn{Percent: 1}},
			remotewrite.Config{URL: "ftp://x", QueryURL: "ftp://y", Headers: bad, Targets: -1, SeriesPerTarget: -1,
				ScrapeInterval: -1, Batch: -1, Churn: remotewrite.Churn{Percent: 200, Every: -1}, Timeout: -1,
				VerifyWait: -1, RetryBackoff: time.Minute, Retries: -1, Version: "3"}},
		"s3": {s3driver.Config{}, s3driver.Config{Endpoint: "ftp://u:p@h/x", Bucket: "ab", PathStyle: "x", SecretKey: "s",
			Ops: map[string]int{"get": 1, "copy": 1, "put": -1}, Size: "4MiB", Sizes: map[string]int{"1x": 1, "2GiB": 1},
			Objects: -1, Timeout: "soon", Link: "fast", PutOverwrite: true, PrepareConcurrency: -2, KeyPrefix: "/abs"},
			s3driver.Config{Endpoint: "http://h", Bucket: "bkt", CAFile: missing, Ops: map[string]int{"delete": 1},
				SessionToken: "t", Sizes: map[string]int{"1KiB": -1}}},
	}
}

// TestEveryProblemCarriesAParamsKey: every problem a driver's Validate
// finds carries the params key it is about, a yaml key of what the
// driver's params decode into, or "" for the whole config.
func TestEveryProblemCarriesAParamsKey(t *testing.T) {
	configs := badConfigs()
	for name, d := range drivers {
		params := yamlKeys(reflect.TypeOf(d.params))
		if len(configs[name]) == 0 {
			t.Errorf("driver %s: no bad configs to check", name)
		}
		for _, c := range configs[name] {
			errs := c.Validate()
			if len(errs) == 0 {
				t.Errorf("driver %s: %+v has no problems", name, c)
			}
			for _, err := range errs {
				var pe *driver.ParamError
				if !errors.As(err, &pe) {
					t.Errorf("driver %s: problem %q carries no key", name, err)
					continue
				}
				if _, ok := params[pe.Key]; !ok && pe.Key != "" {
					t.Errorf("driver %s: problem %q carries key %q, which is not one of its params", name, err, pe.Key)
				}
			}
		}
	}
}
