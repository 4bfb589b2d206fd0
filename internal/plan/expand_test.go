package plan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCells(t *testing.T) {
	p := loadTestdata(t, "ballast.yaml")
	var got []string
	for i, c := range p.Cells() {
		if c.Index != i {
			t.Errorf("cell %d has Index %d", i, c.Index)
		}
		got = append(got, c.Name)
	}
	want := []string{"ballast=0,gomemlimit=off", "ballast=0,gomemlimit=2GiB",
		"ballast=1GiB,gomemlimit=off", "ballast=1GiB,gomemlimit=2GiB"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells = %q, want %q (first variable slowest, file order)", got, want)
	}
	if vars := p.Cells()[2].Vars; !reflect.DeepEqual(vars, []Var{{"ballast", "1GiB"}, {"gomemlimit", "off"}}) {
		t.Errorf("cell 2 vars = %v", vars)
	}

	cells := loadTestdata(t, "minimal.yaml").Cells()
	if len(cells) != 1 || cells[0].Name != DefaultCell || cells[0].Index != 0 || len(cells[0].Vars) != 0 {
		t.Errorf("a plan without a matrix has cells %+v, want one named %q", cells, DefaultCell)
	}

	three := mustParse(t, "name: x\nmatrix: {z: [1, 2], a: [x, y, w], m: [only]}\n"+okProfiles).Cells()
	if len(three) != 6 || three[0].Name != "z=1,a=x,m=only" || three[1].Name != "z=1,a=y,m=only" ||
		three[3].Name != "z=2,a=x,m=only" || three[5].Name != "z=2,a=w,m=only" {
		t.Errorf("three-variable product: %+v", three)
	}
}

// TestRunCells: with n repetitions every combination runs n times,
// interleaved (repetition 1 of every combination, then repetition 2), each
// repetition a cell of its own whose name and {{cell}} say which; n ≤ 1 is
// Cells.
func TestRunCells(t *testing.T) {
	p := mustParse(t, "name: x\nmatrix: {a: [x, y]}\n"+okProfiles)
	if once := p.RunCells(1); !reflect.DeepEqual(once, p.Cells()) || once[0].Repetition != 0 {
		t.Errorf("RunCells(1) = %+v, want Cells()", once)
	}
	var got []string
	for i, c := range p.RunCells(3) {
		if c.Index != i {
			t.Errorf("cell %d has Index %d", i, c.Index)
		}
		got = append(got, fmt.Sprintf("%s %d %v", c.Name, c.Repetition, c.Vars))
	}
	want := []string{"a=x,repetition=1 1 [{a x}]", "a=y,repetition=1 1 [{a y}]", "a=x,repetition=2 2 [{a x}]",
		"a=y,repetition=2 2 [{a y}]", "a=x,repetition=3 3 [{a x}]", "a=y,repetition=3 3 [{a y}]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunCells(3) = %q, want %q", got, want)
	}
	plain := mustParse(t, "name: x\n"+okProfiles).RunCells(2)
	if len(plain) != 2 || plain[0].Name != "repetition=1" || plain[1].Name != "repetition=2" || len(plain[1].Vars) != 0 {
		t.Errorf("RunCells(2) without a matrix = %+v", plain)
	}
	q := mustParse(t, `name: x
components: [{name: c, run: {command: "{{perflab}}", args: ["{{repetition}}", "{{cell}}"]}}]
`+okProfiles)
	for _, tc := range []struct {
		cell Cell
		want []string
	}{{q.Cells()[0], []string{"1", DefaultCell}}, {q.RunCells(2)[1], []string{"2", "repetition=2"}}} {
		inst, err := q.Expand(tc.cell, Builtins{Perflab: "perflab", RunDir: "r"})
		if err != nil || !reflect.DeepEqual(inst.Components[0].Run.Args, tc.want) {
			t.Errorf("cell %s: args %v, %v; want %v", tc.cell.Name, inst.Components[0].Run.Args, err, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	dir, _ := filepath.Abs("testdata")
	cells := p.Cells()
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	c := cells[5]
	inst, err := p.Expand(c, Builtins{Perflab: "/usr/bin/perflab", RunDir: "/runs/r1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "latency=100ms,gomemlimit=4GiB" || inst.Cell.Name != c.Name {
		t.Fatalf("cell %q", c.Name)
	}
	prov := inst.Components[0]
	r := prov.Run
	if r.Command != "/usr/bin/perflab" || r.Args[5] != "100ms" || r.Dir != filepath.Join(dir, "work") {
		t.Errorf("provider run: %q %q %q", r.Command, r.Args, r.Dir)
	}
	wantEnv := []EnvVar{{"GOMEMLIMIT", "4GiB"}, {"TOKEN", secret}, {"LITERAL", "${NOT_EXPANDED} and {{braces}}"}}
	if !reflect.DeepEqual(r.Env, wantEnv) {
		t.Errorf("env = %q, want %q", r.Env, wantEnv)
	}
	wantDirs := []string{"/runs/r1/provider-latency=100ms,gomemlimit=4GiB", filepath.Join(dir, "data")}
	if !reflect.DeepEqual(prov.DataDirs, wantDirs) {
		t.Errorf("data dirs = %q, want %q", prov.DataDirs, wantDirs)
	}
	if g := inst.Components[1].Run; g.Command != filepath.Join(dir, "bin/gateway") || g.Dir != dir {
		t.Errorf("gateway: command %q dir %q; want both resolved against the plan's directory", g.Command, g.Dir)
	}
	if a := inst.Components[2].Attach; a.PIDFile != filepath.Join(dir, "run/nginx.pid") {
		t.Errorf("pid_file %q", a.PIDFile)
	}
	if a := inst.Components[3].Attach; a.Cgroup != "/sys/fs/cgroup/system.slice/postgresql.service" {
		t.Errorf("cgroup %q", a.Cgroup)
	}
	if p.Components[0].Run.Args[5] != "{{latency}}" || p.Components[0].Run.Env[1].Value != "${MY_TOKEN}" {
		t.Errorf("Expand changed the plan: %q %q", p.Components[0].Run.Args, p.Components[0].Run.Env)
	}

	withCell, err := p.Expand(cells[0], Builtins{Perflab: "p", RunDir: "/r", Cell: "c0"})
	if err != nil || withCell.Components[0].DataDirs[0] != "/r/provider-c0" {
		t.Errorf("{{cell}} from Builtins: %v %v", withCell.Components[0].DataDirs, err)
	}
}

func TestExpandErrors(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	_, err := p.Expand(p.Cells()[0], Builtins{Perflab: "/bin/perflab"})
	want := "testdata/full.yaml:23:17: data_dirs.0: built-in {{run_dir}} has no value here"
	if err == nil || err.Error() != want {
		t.Errorf("Expand without run_dir: %v, want %s", err, want)
	}
	_, err = p.Expand(Cell{Name: "x"}, Builtins{})
	if err == nil || !strings.Contains(err.Error(), "matrix has 2 variables") {
		t.Errorf("Expand of a foreign cell: %v", err)
	}
	_, err = p.Expand(Cell{Vars: []Var{{"gomemlimit", "off"}, {"latency", "1s"}}}, Builtins{})
	if err == nil || !strings.Contains(err.Error(), "variable 1 is gomemlimit, not latency") {
		t.Errorf("Expand of a cell in the wrong order: %v", err)
	}
}

// TestSecrets checks that environment values reach only Instances and
// Secrets, never the forms meant for storage.
func TestSecrets(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	if got := p.Secrets(); !reflect.DeepEqual(got, []string{secret}) {
		t.Errorf("Secrets() = %q", got)
	}
	q := mustParse(t, "name: x\ncomponents: [{name: a, run: {command: x, env: {A: '${EMPTY}', B: '${MY_TOKEN}'}}}]\n"+okProfiles)
	if got := q.Secrets(); !reflect.DeepEqual(got, []string{secret}) {
		t.Errorf("Secrets() = %q; an empty value is no secret", got)
	}
	desc, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	marshalled, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.Profiles[0].Workloads[0].Params.JSON()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := p.Expand(p.Cells()[0], Builtins{Perflab: "p", RunDir: "/r"})
	if err != nil {
		t.Fatal(err)
	}
	instParams, err := inst.Profiles[0].Workloads[0].Params.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, form := range map[string]string{"Describe": string(desc), "json.Marshal": string(marshalled),
		"Params.JSON": string(params), "Instance Params.JSON": string(instParams),
		"%+v": fmt.Sprintf("%+v", *p), "%#v": fmt.Sprintf("%#v", *p)} {
		if strings.Contains(form, secret) {
			t.Errorf("%s holds the secret: %s", name, form)
		}
	}
	if !strings.Contains(string(desc), `"TOKEN":"${MY_TOKEN}"`) || !strings.Contains(string(params), "Bearer ${MY_TOKEN}") {
		t.Errorf("the storage forms lost the references:\n%s\n%s", desc, params)
	}
	if got := p.SecretRefs(); !reflect.DeepEqual(got, []SecretRef{{Value: secret, Ref: "${MY_TOKEN}"}}) {
		t.Errorf("SecretRefs() = %q", got)
	}
}

func TestParamsJSON(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	got, err := p.Profiles[0].Workloads[0].Params.JSON()
	want := `{"url":"http://127.0.0.1:18091/v1/chat/completions","headers":{"Authorization":"Bearer ${MY_TOKEN}"},` +
		`"model":"gpt-{{latency}}","max_tokens":64}`
	if err != nil || string(got) != want {
		t.Errorf("JSON() = %s, %v\nwant %s", got, err, want)
	}
	q := mustParse(t, "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, params: "+
		"{i: 0x10, f: 1.5, inf: .inf, b: yes, t: true, n: ~, s: '7', l: [1, a], e: {}}}]}]\n")
	got, err = q.Profiles[0].Workloads[0].Params.JSON()
	want = `{"i":16,"f":1.5,"inf":".inf","b":"yes","t":true,"n":null,"s":"7","l":[1,"a"],"e":{}}`
	if err != nil || string(got) != want || !json.Valid(got) {
		t.Errorf("JSON() = %s, %v\nwant %s", got, err, want)
	}
	if got, _ := p.Profiles[1].Workloads[0].Params.JSON(); string(got) != "{}" {
		t.Errorf("absent params: %s", got)
	}
}

func TestSelect(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	for _, tc := range []struct {
		list string
		want []string
		err  string
	}{
		{"", []string{"small", "ramp"}, ""},
		{"ramp", []string{"ramp"}, ""},
		{" ramp , small,ramp", []string{"ramp", "small"}, ""},
		{"huge", nil, `unknown profile "huge"; the plan has small, ramp`},
		{"huge,small,tiny", nil, `unknown profiles "huge", "tiny"; the plan has small, ramp`},
		{" , ", nil, `no profile selected by " , "; the plan has small, ramp`},
	} {
		q, err := p.Select(tc.list)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Select(%q) error = %v, want %s", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", tc.list, err)
			continue
		}
		var got []string
		for _, pr := range q.Profiles {
			got = append(got, pr.Name)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Select(%q) = %q, want %q", tc.list, got, tc.want)
		}
	}
	if len(p.Profiles) != 2 {
		t.Errorf("Select changed the plan")
	}
	if pr, err := p.Profile("ramp"); err != nil || pr.Name != "ramp" {
		t.Errorf("Profile(ramp) = %v, %v", pr.Name, err)
	}
	if _, err := p.Profile("x"); err == nil || err.Error() != `unknown profile "x"; the plan has small, ramp` {
		t.Errorf("Profile(x): %v", err)
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"a": "A", "b_2": "B"}
	sub := func(r ref) string {
		if r.env {
			return "<" + r.name + ">"
		}
		return vars[r.name]
	}
	for _, tc := range []struct{ in, want, err string }{
		{"plain $HOME $1 $$ {x} }} {", "plain $HOME $1 $$ {x} }} {", ""},
		{"{{a}}-{{ b_2 }}-${T_1}", "A-B-<T_1>", ""},
		{"$${a} $${{a}} {{{{a}}", "${a} ${{a}} {{a}}", ""},
		{"x${", "", `malformed reference "${": want ${NAME}; write $${ for a literal ${`},
		{"${1X}", "", `malformed reference "${1X}": want ${NAME}; write $${ for a literal ${`},
		{"{{a}", "", `malformed reference "{{a}": want {{name}}; write {{{{ for a literal {{`},
		{"{{}}", "", `malformed reference "{{}}": want {{name}}; write {{{{ for a literal {{`},
		{"{{a-b}}", "", `malformed reference "{{a-b}}": want {{name}}; write {{{{ for a literal {{`},
	} {
		got, err := substitute(tc.in, sub)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("substitute(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("substitute(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRateString(t *testing.T) {
	for in, want := range map[string]string{"500/s": "500/s", "1/m": "1/m", "0.5/s": "0.5/s", "7/h": "7/h",
		"1/100ms": "10/s", "5.8MB/s": "5.8MB/s", "4MiB/s": "4MiB/s", "1MB/m": "1MB/m", "1000B/s": "1kB/s",
		"1500B/s": "1.5kB/s", "1023B/s": "1.023kB/s", "7B/s": "7B/s", "2KiB/h": "2KiB/h", "123456.789/s": "123456.789/s"} {
		r, err := parseRate("rate", in)
		if err != nil {
			t.Errorf("parseRate(%q): %v", in, err)
			continue
		}
		if got := r.String(); got != want {
			t.Errorf("parseRate(%q).String() = %q, want %q", in, got, want)
		}
		if back, err := parseRate("rate", r.String()); err != nil || back != r {
			t.Errorf("%q does not read back as %+v: %+v, %v", r.String(), r, back, err)
		}
	}
}

func TestExpandParamsBuiltin(t *testing.T) {
	p := mustParse(t, "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, "+
		"params: {out: '{{run_dir}}/out'}}]}]\n")
	_, err := p.Expand(p.Cells()[0], Builtins{Perflab: "p"})
	if want := "plan.yaml:2:94: params: built-in {{run_dir}} has no value here"; err == nil || err.Error() != want {
		t.Errorf("Expand: %v, want %s", err, want)
	}
	inst, err := p.Expand(p.Cells()[0], Builtins{Perflab: "p", RunDir: "/r"})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Out string `yaml:"out"`
	}
	if err := inst.Profiles[0].Workloads[0].Params.Decode(&cfg); err != nil || cfg.Out != "/r/out" {
		t.Errorf("Decode = %+v, %v", cfg, err)
	}
}
