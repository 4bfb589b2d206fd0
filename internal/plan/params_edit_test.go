package plan

import (
	"errors"
	"strings"
	"testing"
)

const cutPlan = `name: x
matrix:
  port: [8082]
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: d
        rate: 1/s
        params:
          url: "http://127.0.0.1:8081/"
          method: GET
          gateway:
            url: "http://127.0.0.1:{{port}}/"
            component: gw
`

func TestParamsCutReplace(t *testing.T) {
	p := mustParse(t, cutPlan)
	inst, err := p.Expand(p.Cells()[0], Builtins{Perflab: "p", RunDir: "/r"})
	if err != nil {
		t.Fatal(err)
	}
	params := inst.Profiles[0].Workloads[0].Params
	rest, gw, found := params.Cut("gateway")
	if !found || rest.Has("gateway") || !params.Has("gateway") || !rest.Has("url") {
		t.Fatalf("Cut: found %v; rest has gateway %v", found, rest.Has("gateway"))
	}
	var g struct {
		URL       string `yaml:"url"`
		Component string `yaml:"component"`
	}
	if err := gw.Decode(&g); err != nil || g.URL != "http://127.0.0.1:8082/" || g.Component != "gw" {
		t.Errorf("gateway decodes to %+v, %v", g, err)
	}
	via, ok := rest.Replace("url", gw, "url")
	if !ok {
		t.Fatal("Replace: no url")
	}
	var direct, through driverConfig
	if err := rest.Decode(&direct); err != nil {
		t.Fatal(err)
	}
	if err := via.Decode(&through); err != nil {
		t.Fatal(err)
	}
	if direct.URL != "http://127.0.0.1:8081/" || through.URL != "http://127.0.0.1:8082/" || through.Method != "GET" {
		t.Errorf("direct %+v, through the gateway %+v", direct, through)
	}
	if _, ok := rest.Replace("nope", gw, "url"); ok {
		t.Error("Replace of a missing key succeeded")
	}
	if _, _, found := rest.Cut("gateway"); found {
		t.Error("Cut found a key already cut")
	}
	if _, _, found := (Params{}).Cut("gateway"); found || (Params{}).Has("url") {
		t.Error("empty params have keys")
	}
	raw, _ := params.JSON()
	if !strings.Contains(string(raw), `"gateway":{"url":"http://127.0.0.1:{{port}}/","component":"gw"}`) {
		t.Errorf("the params as stored lost the gateway: %s", raw)
	}
}

// A problem in a replaced value is reported where the value was written.
func TestParamsReplacePosition(t *testing.T) {
	p := mustParse(t, strings.Replace(cutPlan, `url: "http://127.0.0.1:{{port}}/"`, `url: [1]`, 1))
	rest, gw, _ := p.Profiles[0].Workloads[0].Params.Cut("gateway")
	via, _ := rest.Replace("url", gw, "url")
	var c driverConfig
	err := via.Decode(&c)
	var pe Errors
	if !errors.As(err, &pe) || len(pe) != 1 || pe[0].Line != 15 {
		t.Errorf("error %v, want one at line 15", err)
	}
}
