package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMergeKeys checks merge keys (<<) at the top level, in components,
// profiles and workloads, block and flow style, a single mapping or a
// list, nested, with explicit keys and earlier mappings overriding.
func TestMergeKeys(t *testing.T) {
	p := mustParse(t, `<<: {name: merged, sample_interval: 2s}
description: top
components:
  - &api
    name: api
    group: g
    run: &run {command: /bin/sleep, args: ["9"], stop_grace: 3s}
  - <<: *api
    name: api2
    run: {<<: *run, args: ["8"]}
profiles:
  - &smoke
    name: smoke
    duration: 10s
    workloads:
      - &get
        name: get
        driver: d
        rate: &rate 10/s
        grace: 1s
      - {<<: *get, name: get2, rate: 20/s}
      - name: get3
        <<: [{rate: 30/s, grace: 3s}, *get]
        driver: e
  - <<: *smoke
    name: soak
    duration: 20s
`)
	if p.Name != "merged" || p.Description != "top" || p.SampleInterval != 2*time.Second {
		t.Errorf("top level: name %q, description %q, sample_interval %v", p.Name, p.Description, p.SampleInterval)
	}
	api2 := p.Components[1]
	if api2.Name != "api2" || api2.Group != "g" || api2.Run == nil || api2.Run.Command != "/bin/sleep" ||
		!reflect.DeepEqual(api2.Run.Args, []string{"8"}) || api2.Run.StopGrace != 3*time.Second {
		t.Errorf("component api2 = %+v, run %+v", api2, api2.Run)
	}
	type wl struct {
		name, driver string
		rate         float64
		grace        time.Duration
	}
	var got []wl
	for _, w := range p.Profiles[0].Workloads {
		got = append(got, wl{w.Name, w.Driver, w.Rate.PerSecond, w.Grace})
	}
	want := []wl{{"get", "d", 10, time.Second}, {"get2", "d", 20, time.Second}, {"get3", "e", 30, 3 * time.Second}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workloads %+v, want %+v", got, want)
	}
	soak := p.Profiles[1]
	if soak.Name != "soak" || soak.Duration != 20*time.Second || len(soak.Workloads) != 3 || soak.Workloads[2].Name != "get3" {
		t.Errorf("profile soak = %+v", soak)
	}
	// Where a merged value is written: in the anchor.
	if pos := p.Profiles[0].Workloads[1].Pos("driver"); pos != (Pos{Line: 18, Col: 17}) {
		t.Errorf("get2's driver at %v, want the anchor's line 18:17", pos)
	}
}

// TestMergeKeysInParams checks merge keys in params, block and flow style:
// Decode, JSON (merged keys where the merge key is) and the positions of
// problems in merged values, which are in the anchor.
func TestMergeKeysInParams(t *testing.T) {
	p := mustParse(t, `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: base
        driver: d
        rate: 1/s
        params: &common
          url: "http://127.0.0.1:8080/"
          headers: &h {Authorization: "Bearer ${MY_TOKEN}"}
          timeout: 2s
      - name: block
        driver: d
        rate: 1/s
        params:
          method: POST
          <<: *common
          timeout: 5s
      - {name: flow, driver: d, rate: 1/s, params: {<<: [{port: 1, timeout: 3s}, *common], headers: {<<: *h, X: y}}}
`)
	ws := p.Profiles[0].Workloads
	var block, flow driverConfig
	if err := ws[1].Params.Decode(&block); err != nil {
		t.Fatal(err)
	}
	if err := ws[2].Params.Decode(&flow); err != nil {
		t.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + secret}
	if want := (driverConfig{URL: "http://127.0.0.1:8080/", Method: "POST", Headers: auth, Timeout: 5 * time.Second}); !reflect.DeepEqual(block, want) {
		t.Errorf("block: %+v\nwant %+v", block, want)
	}
	auth["X"] = "y"
	if want := (driverConfig{URL: "http://127.0.0.1:8080/", Headers: auth, Timeout: 3 * time.Second, Port: 1}); !reflect.DeepEqual(flow, want) {
		t.Errorf("flow: %+v\nwant %+v", flow, want)
	}
	js, err := ws[1].Params.JSON()
	if want := `{"method":"POST","url":"http://127.0.0.1:8080/","headers":{"Authorization":"Bearer ${MY_TOKEN}"},"timeout":"5s"}`; err != nil || string(js) != want {
		t.Errorf("JSON = %s, %v\nwant %s", js, err, want)
	}
	var bad struct {
		URL     int           `yaml:"url"`
		Timeout time.Duration `yaml:"timeout"`
	}
	err = ws[1].Params.Decode(&bad)
	if err == nil || !strings.Contains(err.Error(), `plan.yaml:11:11: params: unknown key "headers"; want one of: url, timeout`) {
		t.Errorf("an unknown key merged from the anchor: %v", err)
	}
	err = ws[2].Params.Decode(&bad)
	want := []string{
		`plan.yaml:10:16: params.url: want a whole number, got "http://127.0.0.1:8080/"`,
		`plan.yaml:20:59: params: unknown key "port"; want one of: url, timeout`,
		`plan.yaml:20:92: params: unknown key "headers"; want one of: url, timeout`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// TestMergeKeyProblems checks problems with merge keys and with what they
// merge, each where it is written.
func TestMergeKeyProblems(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"unknown key in the anchor", `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - {name: w1, driver: d, rate: 1/s, params: &extra {retries: 3}}
      - {name: w2, driver: d, rate: 1/s, <<: *extra}
`, []string{`plan.yaml:6:58: workload: unknown key "retries"; want one of: ` + workloadKeys}},
		{"bad value in the anchor", `name: x
profiles:
  - &p {name: a, duration: soon, workloads: [{name: w, driver: d, rate: 1/s}]}
  - {<<: *p, name: b}
`, []string{`plan.yaml:3:28: duration "soon": want a duration like 30s, 5m or 1h30m`}},
		{"not a mapping", "name: x\n<<: 3\n" + okProfiles, []string{
			`plan.yaml:2:5: merge key <<: want a mapping (<<: *base) or a list of mappings (<<: [*a, *b]), got "3"`}},
		{"not a mapping in the list", "name: x\n<<: [{description: d}, [y]]\n" + okProfiles, []string{
			`plan.yaml:2:24: merge key <<: want a mapping (<<: *base) or a list of mappings (<<: [*a, *b]), got a list in the list`}},
		{"twice", "name: x\n<<: {description: d}\n<<: {description: e}\n" + okProfiles, []string{
			`plan.yaml:3:1: duplicate merge key << (first on line 2); merge a list instead: <<: [*a, *b]`}},
		{"quoted is a string", "name: x\n'<<': {description: d}\n" + okProfiles, []string{
			`plan.yaml:2:1: plan: unknown key "<<"; want one of: ` + planKeys}},
		{"explicit keys still checked", "name: x\n<<: {name: y}\nname: z\n" + okProfiles, []string{
			`plan.yaml:3:1: plan: duplicate key "name" (first on line 1)`}},
	})
}
