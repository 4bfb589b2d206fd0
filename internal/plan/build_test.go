package plan

import (
	"slices"
	"testing"
)

// builtPlan is a plan built in Go as perflab http builds one: a workload
// whose values came from flags.
func builtPlan(t *testing.T, w Workload, params ...Param) *Plan {
	t.Helper()
	ps, err := ParamsOf(params...)
	if err != nil {
		t.Fatal(err)
	}
	w.Name, w.Driver, w.Params = "http", "http", ps
	pr := Profile{Name: "http", Duration: 2e9, Workloads: []Workload{w}}
	pr.SetPos("duration", Pos{Flag: "--duration"})
	return &Plan{Name: "http", SampleInterval: DefaultSampleInterval, Implicit: true, Profiles: []Profile{pr}}
}

// TestBuiltPlanNamesFlags: a problem with a value a flag gave names the
// flag, in the words a plan file's problem has for the key.
func TestBuiltPlanNamesFlags(t *testing.T) {
	w := Workload{Model: Open, Rate: Rate{PerSecond: 10}, VUs: VUs{Min: 20, Max: 10}, Grace: -1}
	for key, flag := range map[string]string{"vus.min": "--vus-min", "vus.max": "--vus-max", "grace": "--grace"} {
		w.SetPos(key, Pos{Flag: flag})
	}
	var got []string
	for _, err := range builtPlan(t, w).Validate() {
		got = append(got, err.Error())
	}
	want := []string{"--grace -1ns must be >= 0", "--vus-min 20 is larger than --vus-max 10"}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	closed := Workload{Model: Closed, Concurrency: 4, Backlog: 3}
	closed.SetPos("backlog", Pos{Flag: "--backlog"})
	closed.SetPos("model", Pos{Flag: "--rate"})
	if errs := builtPlan(t, closed).Validate(); len(errs) != 1 || errs[0].Error() != "--backlog applies to the open model (--rate)" {
		t.Errorf("closed: %v", errs)
	}
}

// TestParamsOfAreLiteral: params from flags hold no references, so a
// ${NAME} or {{name}} in a value is sent as it is; their problems name the
// flag.
func TestParamsOfAreLiteral(t *testing.T) {
	p := builtPlan(t, Workload{Model: Closed, Concurrency: 1},
		Param{Key: "url", Value: "http://127.0.0.1:1/{{x}}?q=${NOPE}"}, Param{Key: "follow_redirects", Value: 3, Flag: "--follow-redirects"},
		Param{Key: "headers", Value: map[string]string{"X-A": "$${b}"}, Flag: "-H"})
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	inst, err := p.Expand(p.Cells()[0], Builtins{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		URL     string            `yaml:"url"`
		Follow  int               `yaml:"follow_redirects"`
		Headers map[string]string `yaml:"headers"`
	}
	params := inst.Profiles[0].Workloads[0].Params
	if err := params.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.URL != "http://127.0.0.1:1/{{x}}?q=${NOPE}" || got.Follow != 3 || got.Headers["X-A"] != "$${b}" {
		t.Errorf("decoded %+v", got)
	}
	if !params.FromFlags() || params.Flag("headers") != "-H" || params.Flag("url") != "" {
		t.Errorf("from flags %v, -H %q, url %q", params.FromFlags(), params.Flag("headers"), params.Flag("url"))
	}
	if raw, _ := params.JSON(); string(raw) != `{"url":"http://127.0.0.1:1/{{x}}?q=${NOPE}","follow_redirects":3,"headers":{"X-A":"$${b}"}}` {
		t.Errorf("stored as %s", raw)
	}
}

// TestImplicitPlanIsOneProfile: an implicit plan has one profile and no
// matrix; built otherwise, it is refused.
func TestImplicitPlanIsOneProfile(t *testing.T) {
	p := builtPlan(t, Workload{Model: Closed, Concurrency: 1})
	p.Matrix = []Variable{{Name: "x", Values: []string{"1", "2"}}}
	errs := p.Validate()
	if len(errs) != 1 || errs[0].Error() != "an implicit plan has one profile, no matrix and no repetitions" {
		t.Errorf("problems %v", errs)
	}
}
