package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// okProfiles is a valid profiles section, for cases about other sections.
const okProfiles = "profiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s}]}]\n"

// parseErrors parses text and returns its errors, one per line.
func parseErrors(t *testing.T, text string) string {
	t.Helper()
	p, err := ParseEnv("plan.yaml", []byte(text), testEnv)
	if err == nil {
		t.Fatalf("ParseEnv accepted the plan: %+v", p)
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is a %T, not Errors: %v", err, err)
	}
	return err.Error()
}

// errorCase is a plan and the exact problems Parse must report for it.
type errorCase struct {
	name, plan string
	want       []string
}

func runErrorCases(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseErrors(t, tc.plan)
			if want := strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestErrorsDocument checks problems with the document, its keys, types and
// values, and the matrix, each at its exact position.
func TestErrorsDocument(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"empty", "", []string{`plan.yaml:1:1: the plan is empty`}},
		{"syntax", "name: x\nprofiles: [\n", []string{`plan.yaml:2: invalid YAML: did not find expected node content`}},
		{"two documents", "name: x\n" + okProfiles + "---\nname: y\n", []string{
			`plan.yaml:3:1: a plan is one YAML document; remove the second one`}},
		{"root not a mapping", "- a\n", []string{
			`plan.yaml:1:1: plan: want a mapping with keys ` + planKeys + `, got a list`}},
		{"unknown key", "name: x\nprofile: []\n" + okProfiles, []string{
			`plan.yaml:2:1: plan: unknown key "profile"; want one of: ` + planKeys}},
		{"duplicate key", "name: x\nname: y\n" + okProfiles, []string{
			`plan.yaml:2:1: plan: duplicate key "name" (first on line 1)`}},
		{"wrong type", "name: [x]\n" + okProfiles, []string{`plan.yaml:1:7: name: want a string, got a list`}},
		{"missing name and profiles", "description: d\n", []string{
			`plan.yaml:1:1: the plan needs a name`, `plan.yaml:1:1: the plan needs at least one profile`}},
		{"bad durations", "name: x\nsample_interval: 30\nstop_grace: soon\n" + okProfiles, []string{
			`plan.yaml:2:18: sample_interval "30" needs a unit: 30s`,
			`plan.yaml:3:13: stop_grace "soon": want a duration like 30s, 5m or 1h30m`}},
		{"negative durations", "name: x\nsample_interval: 0s\nstop_grace: -1s\n" + okProfiles, []string{
			`plan.yaml:2:18: sample_interval 0s must be > 0`, `plan.yaml:3:13: stop_grace -1s must be >= 0`}},
		{"result intervals out of bounds", "name: x\nresult_interval: 50ms\n" + okProfiles, []string{
			`plan.yaml:2:18: result_interval 50ms: want 100ms to 1m0s`}},
		{"result intervals of a whole run", "name: x\nresult_interval: 2m\n" + okProfiles, []string{
			`plan.yaml:2:18: result_interval 2m0s: want 100ms to 1m0s`}},
		{"merge keys", "name: x\nbase: &b {name: y}\n" + okProfiles + "extra:\n  <<: *b\n", []string{
			`plan.yaml:2:1: plan: unknown key "base"; want one of: ` + planKeys,
			`plan.yaml:4:1: plan: unknown key "extra"; want one of: ` + planKeys}},
		{"matrix", `name: x
matrix:
  a: []
  b: [1, 2, 1]
  cell: [x]
  c: y
  a: [z]
` + okProfiles, []string{
			`plan.yaml:3:6: matrix variable a has no values`,
			`plan.yaml:4:13: matrix variable b lists "1" twice`,
			`plan.yaml:5:3: matrix variable "cell" is a built-in; choose another name`,
			`plan.yaml:6:6: matrix variable c: want a list of values, got "y"`,
			`plan.yaml:7:3: matrix: duplicate key "a" (first on line 3)`}},
		{"repeat", "name: x\nrepeat: 0\n" + okProfiles, []string{
			`plan.yaml:2:9: repeat 0: want 1 or more (1 runs every cell once)`}},
		{"repeat negative", "name: x\nrepeat: -2\n" + okProfiles, []string{
			`plan.yaml:2:9: repeat -2: want 1 or more (1 runs every cell once)`}},
		{"repeat too many", "name: x\nrepeat: 101\n" + okProfiles, []string{
			`plan.yaml:2:9: repeat 101: want 1 (every cell once) to 100`}},
		{"repeat not a number", "name: x\nrepeat: thrice\n" + okProfiles, []string{
			`plan.yaml:2:9: repeat "thrice": want a whole number`}},
		{"repeat of a matrix too large", "name: x\nrepeat: 3\nmatrix:\n  a: [1,2,3,4,5,6,7,8,9,10]\n  b: [1,2,3,4,5,6,7,8,9,10]\n" +
			"  c: [1,2,3,4,5,6,7,8,9,10]\n  d: [1,2,3,4]\n" + okProfiles, []string{
			`plan.yaml:2:9: 4000 cells × repeat 3 is more than 10000 cells; split the plan`}},
		{"repetition is a built-in", "name: x\nmatrix: {repetition: [1, 2]}\n" + okProfiles, []string{
			`plan.yaml:2:10: matrix variable "repetition" is a built-in; choose another name`}},
		{"too many cells", "name: x\nmatrix:\n  a: [1,2,3,4,5,6,7,8,9,10]\n  b: [1,2,3,4,5,6,7,8,9,10]\n" +
			"  c: [1,2,3,4,5,6,7,8,9,10]\n  d: [1,2,3,4,5,6,7,8,9,10]\n  e: [1, 2]\n" + okProfiles, []string{
			`plan.yaml:3:3: the matrix has more than 10000 cells; split the plan`}},
	})
}

// TestErrorsComponents checks problems with components and templates.
func TestErrorsComponents(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"duplicate names", `name: x
components:
  - {name: api, attach: {pid: 1}}
  - {name: api, attach: {pid: 2}}
profiles:
  - {name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s}, {name: w, driver: d, rate: 1/s}]}
  - {name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s}]}
`, []string{
			`plan.yaml:4:12: component "api" is defined twice (first on line 3)`,
			`plan.yaml:6:81: workload "w" is defined twice (first on line 6)`,
			`plan.yaml:7:12: profile "a" is defined twice (first on line 6)`}},
		{"bad names", "name: x\ncomponents: [{name: API, attach: {pid: 1}}]\n" +
			"profiles: [{name: 'a b', duration: 1s, workloads: [{name: w, driver: d, rate: 1/s}]}]\n", []string{
			`plan.yaml:2:21: component name "API": use lowercase letters, digits, _ and -`,
			`plan.yaml:3:19: profile name "a b": use lowercase letters, digits, _ and -`}},
		{"run and attach", `name: x
components:
  - name: both
    run: {command: x}
    attach: {pid: 1}
  - name: neither
    group: g
` + okProfiles, []string{
			`plan.yaml:5:13: component "both" has both run and attach; give one`,
			`plan.yaml:6:5: component "neither" needs run (to start it), attach (to find it running) or observe: prometheus (to read it from Prometheus)`}},
		{"attach keys", `name: x
components:
  - {name: a, attach: {}}
  - {name: b, attach: {pid: 7, process: nginx}}
  - {name: c, attach: {pid: 0}}
  - {name: d, attach: {pid: x}}
` + okProfiles, []string{
			`plan.yaml:3:23: attach needs one of pid, pid_file, process or cgroup`,
			`plan.yaml:4:41: attach takes one of pid, pid_file, process or cgroup; got pid and process`,
			`plan.yaml:5:29: pid 0 must be > 0`,
			`plan.yaml:6:29: pid "x": want a whole number`}},
		{"run fields", `name: x
components:
  - name: a
    run:
      args: [x]
      ready: {http: "http://h/", tcp: "h:1", timeout: 0s}
      bogus: 1
  - name: b
    run: {command: x, ready: {tcp: nohost}}
    metrics: localhost:9090/metrics
` + okProfiles, []string{
			`plan.yaml:5:7: run needs a command`,
			`plan.yaml:6:39: ready takes http or tcp, not both`,
			`plan.yaml:6:55: ready timeout 0s must be > 0`,
			`plan.yaml:7:7: run: unknown key "bogus"; want one of: ` + runKeys,
			`plan.yaml:9:36: ready tcp "nohost": want host:port`,
			`plan.yaml:10:14: metrics "localhost:9090/metrics": want an http:// or https:// URL`}},
		{"undefined variables", `name: x
components:
  - name: a
    run:
      command: "{{perflab}}"
      args: [--x, "{{nope}}"]
      env: {A: "{{gomemlimit}}-{{other}}"}
matrix:
  gomemlimit: ["off", 1GiB]
profiles:
  - name: p
    duration: 1s
    workloads:
      - name: w
        driver: d
        rate: 1/s
        params: {url: "http://{{host}}/", n: 3, list: ["{{cell}}", "{{nope}}"]}
`, []string{
			`plan.yaml:6:19: args.1: undefined variable {{nope}}; the matrix defines gomemlimit; built-ins are perflab, run_dir, cell, repetition`,
			`plan.yaml:7:16: env.A: undefined variable {{other}}; the matrix defines gomemlimit; built-ins are perflab, run_dir, cell, repetition`,
			`plan.yaml:17:23: params: undefined variable {{host}}; the matrix defines gomemlimit; built-ins are perflab, run_dir, cell, repetition`,
			`plan.yaml:17:68: params: undefined variable {{nope}}; the matrix defines gomemlimit; built-ins are perflab, run_dir, cell, repetition`}},
		{"undefined variable without matrix", "name: x\ncomponents: [{name: a, run: {command: '{{x}}'}}]\n" + okProfiles,
			[]string{`plan.yaml:2:39: command: undefined variable {{x}}; the plan has no matrix; built-ins are perflab, run_dir, cell, repetition`}},
		{"malformed references", "name: x\ncomponents: [{name: a, run: {command: x, args: ['${A', '{{ a b }}', '$${A}', '{{{{b}}']}}]\n" + okProfiles,
			[]string{
				`plan.yaml:2:49: args.0: malformed reference "${A": want ${NAME}; write $${ for a literal ${`,
				`plan.yaml:2:56: args.1: malformed reference "{{ a b }}": want {{name}}; write {{{{ for a literal {{`}},
		{"unset environment variables", `name: x
components: [{name: a, run: {command: x, env: {T: "${NOT_SET}", U: "${EMPTY}"}}}]
profiles:
  - name: a
    duration: 1s
    workloads: [{name: w, driver: d, rate: 1/s, params: {h: "Bearer ${ALSO_NOT_SET}", k: "${MY_TOKEN}"}}]
`, []string{
			`plan.yaml:2:51: environment variable NOT_SET is not set: export it before running the plan`,
			`plan.yaml:6:61: environment variable ALSO_NOT_SET is not set: export it before running the plan`}},
	})
}

// TestErrorsProfiles checks problems with profiles and workloads.
func TestErrorsProfiles(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"rates", `name: x
profiles:
  - name: a
    duration: 1s
    workloads:
      - {name: w1, driver: d, rate: 5000}
      - {name: w2, driver: d, rate: 5MB}
      - {name: w3, driver: d, rate: fast/s}
      - {name: w4, driver: d, rate: 0/s}
      - {name: w5, driver: d, rate: 10/fortnight}
`, []string{
			`plan.yaml:6:37: rate "5000" needs a unit: 5000/s`,
			`plan.yaml:7:37: rate "5MB" needs a time unit: 5MB/s`,
			`plan.yaml:8:37: rate "fast/s": want an operation rate like 500/s or a byte rate like 5.8MB/s, per s, m, h or a duration like 100ms`,
			`plan.yaml:9:37: rate must be > 0`,
			`plan.yaml:10:37: rate "10/fortnight": want an operation rate like 500/s or a byte rate like 5.8MB/s, per s, m, h or a duration like 100ms`}},
		{"missing profile and workload fields", `name: x
profiles:
  - workloads:
      - rate: 1/s
  - name: b
    duration: 1s
    workloads: []
`, []string{
			`plan.yaml:3:5: profile needs a duration`,
			`plan.yaml:3:5: profile needs a name`,
			`plan.yaml:4:9: workload needs a driver`,
			`plan.yaml:4:9: workload needs a name`,
			`plan.yaml:7:16: profile "b" has no workloads`}},
		{"profile durations", `name: x
profiles:
  - {name: a, duration: 0s, workloads: [{name: w, driver: d, rate: 1/s}]}
  - {name: b, duration: 10s, warmup: 10s, workloads: [{name: w, driver: d, rate: 1/s}]}
  - {name: c, duration: 10s, workloads: {name: w}}
`, []string{
			`plan.yaml:3:25: duration 0s must be > 0`,
			`plan.yaml:4:38: warmup 10s must be >= 0 and shorter than the duration 10s`,
			`plan.yaml:5:41: workloads: want a list, got a mapping`}},
		{"load shape", `name: x
profiles:
  - name: a
    duration: 10s
    workloads:
      - {name: none, driver: d, model: closed}
      - {name: both, driver: d, rate: 1/s, concurrency: 2}
      - {name: open, driver: d, model: open, concurrency: 2}
      - {name: closed, driver: d, concurrency: 2, vus: {max: 3}, backlog: 1}
      - {name: start, driver: d, rate: 1/s, start_rate: 1/s}
      - {name: model, driver: d, model: poisson, rate: 1/s}
      - {name: conc, driver: d, concurrency: 0}
      - {name: vus, driver: d, rate: 1/s, vus: {min: 10, max: 5}}
      - {name: vus2, driver: d, rate: 1/s, vus: {min: -1, max: 0}, backlog: -1, grace: -1s}
`, []string{
			`plan.yaml:6:9: workload "none" needs concurrency or stages`,
			`plan.yaml:7:57: workload "both": give one of rate and concurrency, not both`,
			`plan.yaml:8:59: concurrency applies to the closed model, and this workload is open (set model: closed)`,
			`plan.yaml:9:56: vus applies to the open model, and this workload is closed`,
			`plan.yaml:9:75: backlog applies to the open model, and this workload is closed`,
			`plan.yaml:10:57: start_rate applies only with stages`,
			`plan.yaml:11:41: model "poisson": want open or closed`,
			`plan.yaml:12:46: concurrency 0 must be >= 1`,
			`plan.yaml:13:54: vus.min 10 is larger than vus.max 5`,
			`plan.yaml:14:55: vus.min -1 must be >= 0`,
			`plan.yaml:14:64: vus.max 0 must be >= 1`,
			`plan.yaml:14:77: backlog -1 must be >= 0`,
			`plan.yaml:14:88: grace -1s must be >= 0`}},
		{"dispatch quantum", `name: x
profiles:
  - name: a
    duration: 10s
    workloads:
      - {name: zero, driver: d, rate: 1/s, dispatch_quantum: 0s}
      - {name: closed, driver: d, concurrency: 2, dispatch_quantum: 1ms}
      - {name: unit, driver: d, rate: 1/s, dispatch_quantum: 250}
`, []string{
			`plan.yaml:6:62: dispatch_quantum 0s must be > 0 (1ns sends each arrival on its own)`,
			`plan.yaml:7:69: dispatch_quantum applies to the open model, and this workload is closed`,
			`plan.yaml:8:62: dispatch_quantum "250" needs a unit: 250s`}},
		{"stages", `name: x
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: long
        driver: d
        stages: [{duration: 8s, target: 10/s}, {duration: 8s, target: 1MB/s}]
      - name: closed
        driver: d
        model: closed
        stages: [{duration: 0s, target: 1/s}, {duration: 1s, target: 2, ramp: x}]
`, []string{
			`plan.yaml:8:17: stages last 16s, longer than the profile's duration 10s`,
			`plan.yaml:8:71: stage 2: target mixes operation and byte rates; use one kind in a workload`,
			`plan.yaml:12:29: stage 1: duration 0s must be > 0`,
			`plan.yaml:12:41: target "1/s": want a whole number`,
			`plan.yaml:12:73: stage: unknown key "ramp"; want one of: duration, target`}},
		{"params", "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, params: [x]}]}]\n",
			[]string{`plan.yaml:2:88: params: want a mapping, got a list`}},
	})
}

// TestManyErrors checks that problems from decoding and from Validate all
// come back together, sorted by position.
func TestManyErrors(t *testing.T) {
	plan := `name: x
sample_interval: often
components:
  - {name: a, run: {command: x, args: ["{{nope}}"]}, extra: 1}
profiles:
  - name: a
    duration: 10s
    workloads:
      - {name: w, driver: d, rate: 5000}
      - {name: w, driver: d, concurrency: 1, vus: {min: 1}}
`
	got := parseErrors(t, plan)
	want := strings.Join([]string{
		`plan.yaml:2:18: sample_interval "often": want a duration like 30s, 5m or 1h30m`,
		`plan.yaml:4:40: args.0: undefined variable {{nope}}; the plan has no matrix; built-ins are perflab, run_dir, cell, repetition`,
		`plan.yaml:4:54: component: unknown key "extra"; want one of: ` + componentKeys,
		`plan.yaml:9:36: rate "5000" needs a unit: 5000/s`,
		`plan.yaml:10:16: workload "w" is defined twice (first on line 9)`,
		`plan.yaml:10:51: vus applies to the open model, and this workload is closed`,
	}, "\n")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestValidateBuilt checks Validate on a plan built in Go: the same checks,
// without positions.
func TestValidateBuilt(t *testing.T) {
	p := &Plan{Name: "x", SampleInterval: DefaultSampleInterval,
		Components: []Component{{Name: "a", Run: &Run{Command: "{{nope}}"}}},
		Profiles: []Profile{{Name: "p", Duration: 1e9, Workloads: []Workload{
			{Name: "w", Driver: "d", Model: Open, Rate: Rate{PerSecond: 1}, Concurrency: 3, VUs: VUs{5, 1}}}}}}
	var got []string
	for _, err := range p.Validate() {
		got = append(got, err.Error())
	}
	want := []string{
		`command: undefined variable {{nope}}; the plan has no matrix; built-ins are perflab, run_dir, cell, repetition`,
		`vus.min 5 is larger than vus.max 1`,
		`workload "w": give one of rate and concurrency, not both`,
	}
	if strings.Join(slices.Sorted(slices.Values(got)), "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
