package plan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// driverConfig is what a driver might decode its params into.
type driverConfig struct {
	URL     string            `yaml:"url"`
	Method  string            // key "method", as yaml.v3 names it
	Headers map[string]string `yaml:"headers"`
	Timeout time.Duration     `yaml:"timeout"`
	Port    int               `yaml:"port"`
	TLS     *tlsConfig        `yaml:"tls"`
	Targets []target          `yaml:"targets"`
	Level   level             `yaml:"level"`
	Common  `yaml:",inline"`
	Ignored string `yaml:"-"`
}

type tlsConfig struct {
	Insecure bool   `yaml:"insecure"`
	CA       string `yaml:"ca"`
}

type target struct {
	Host   string  `yaml:"host"`
	Weight float64 `yaml:"weight"`
}

// Common is embedded inline.
type Common struct {
	Retries int `yaml:"retries"`
}

// level decodes itself from text.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("level %q: want low or high", b)
	}
	return nil
}

const paramsPlan = `name: x
matrix:
  port: [8080]
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: d
        rate: 1/s
        params:
          url: "http://127.0.0.1:{{port}}/"
          method: GET
          headers: {Authorization: "Bearer ${MY_TOKEN}"}
          timeout: 2s
          port: "{{port}}"
          tls: {insecure: true}
          targets: [{host: a, weight: 0.5}, {host: b}]
          level: high
          retries: 3
`

func TestParamsDecode(t *testing.T) {
	p := mustParse(t, paramsPlan)
	inst, err := p.Expand(p.Cells()[0], Builtins{Perflab: "p", RunDir: "/r"})
	if err != nil {
		t.Fatal(err)
	}
	var got driverConfig
	if err := inst.Profiles[0].Workloads[0].Params.Decode(&got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := driverConfig{URL: "http://127.0.0.1:8080/", Method: "GET",
		Headers: map[string]string{"Authorization": "Bearer " + secret}, Timeout: 2 * time.Second, Port: 8080,
		TLS: &tlsConfig{Insecure: true}, Targets: []target{{"a", 0.5}, {"b", 0}}, Level: 2, Common: Common{Retries: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
	}

	// The plan's own params substitute the environment only.
	var tmpl map[string]any
	if err := p.Profiles[0].Workloads[0].Params.Decode(&tmpl); err != nil {
		t.Fatal(err)
	}
	headers, _ := tmpl["headers"].(map[string]any)
	if tmpl["url"] != "http://127.0.0.1:{{port}}/" || tmpl["port"] != "{{port}}" || headers["Authorization"] != "Bearer "+secret {
		t.Errorf("template Decode = %+v", tmpl)
	}
}

func TestParamsDecodeErrors(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: d
        rate: 1/s
        params:
          url: [x]
          timeout: 30
          port: high
          tls: {insecure: maybe, key: k}
          targets: [{host: a, weight: heavy}, x]
          level: medium
          bogus: 1
          retries: 1
          retries: 2
`)
	var cfg driverConfig
	err := p.Profiles[0].Workloads[0].Params.Decode(&cfg)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Decode error %T %v, want Errors", err, err)
	}
	want := strings.Join([]string{
		`plan.yaml:10:16: params.url: want a string, got a list`,
		`plan.yaml:11:20: params.timeout: want a duration like 30s, got "30"`,
		`plan.yaml:12:17: params.port: want a whole number, got "high"`,
		`plan.yaml:13:27: params.tls.insecure: want true or false, got "maybe"`,
		`plan.yaml:13:34: params.tls: unknown key "key"; want one of: insecure, ca`,
		`plan.yaml:14:39: params.targets[0].weight: want a number, got "heavy"`,
		`plan.yaml:14:47: params.targets[1]: want a mapping, got "x"`,
		`plan.yaml:15:18: params.level: level "medium": want low or high`,
		`plan.yaml:16:11: params: unknown key "bogus"; want one of: url, method, headers, timeout, port, tls, targets, level, retries`,
		`plan.yaml:18:11: params: duplicate key "retries" (first on line 17)`,
	}, "\n")
	if err.Error() != want {
		t.Errorf("got:\n%s\nwant:\n%s", err, want)
	}
	if err := p.Profiles[0].Workloads[0].Params.Decode(cfg); err == nil {
		t.Errorf("Decode into a non-pointer succeeded")
	}
	var none Params
	if err := none.Decode(&cfg); err != nil || !none.IsZero() {
		t.Errorf("absent params: %v", err)
	}
}
