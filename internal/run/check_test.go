package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	otlpdriver "github.com/perflab/perflab/internal/driver/otlp"
	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
)

// checkText writes a plan (and any other files) to a directory and checks
// it as `perflab plan check` does, returning every problem.
func checkText(t *testing.T, text string, files map[string]string) (*plan.Plan, []error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseEnv(path, []byte(text), func(k string) (string, bool) { return "s3cr3t", k == "TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	return p, Check(p, plan.Builtins{Perflab: "/bin/true", RunDir: "RUN_DIR"})
}

func wantProblems(t *testing.T, errs []error, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in\n%s", w, all)
		}
	}
	if len(want) == 0 && len(errs) > 0 {
		t.Errorf("problems:\n%s", all)
	}
}

const rules = `groups:
  - name: node
    rules:
      - alert: HostHighCpuLoad
        expr: sum by (instance) (rate(node_cpu_seconds_total{mode!="idle"}[2m])) > 0.8
`

// TestEveryDriverDecodes checks a plan with a workload of every driver,
// relative files resolved against the plan's directory.
func TestEveryDriverDecodes(t *testing.T) {
	_, errs := checkText(t, `name: all
profiles:
  - name: a
    duration: 10s
    workloads:
      - {name: get, driver: http, rate: 1/s, params: {url: "http://127.0.0.1:1/"}}
      - name: write
        driver: remote_write
        params: {url: "http://127.0.0.1:1/api/v1/write", targets: 2, series_per_target: 500}
      - {name: rules, driver: promql, params: {url: "http://127.0.0.1:1", rules_file: rules.yaml}}
      - {name: ingest, driver: otlp, rate: 1MB/s, params: {endpoint: "127.0.0.1:1"}}
      - {name: lookup, driver: otlp, rate: 5/s, params: {mode: query, query_url: "http://127.0.0.1:2", ids_from: ingest}}
      - name: objects
        driver: s3
        concurrency: 2
        params: {endpoint: "http://127.0.0.1:3", bucket: bkt, objects: 10, size: 1KiB, access_key: k, secret_key: "${TOKEN}"}
      - name: chat
        driver: openai
        rate: 2/s
        params: {url: "http://127.0.0.1:4", model: m, stream: true, prompts_file: prompts.jsonl, api_key: "${TOKEN}"}
`, map[string]string{"rules.yaml": rules, "prompts.jsonl": `{"prompt": "hi"}` + "\n"})
	wantProblems(t, errs)
}

func TestDriverProblemsInPlace(t *testing.T) {
	_, errs := checkText(t, `name: bad
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: write
        driver: remote_write
        params:
          url: "ftp://x/"
          targets: -1
          colour: blue
      - {name: rules, driver: promql, params: {url: "http://127.0.0.1:1", rules_file: nope.yaml}}
      - {name: get, driver: http, params: {url: "http://127.0.0.1:1/"}}
      - {name: q1, driver: otlp, rate: 1/s, params: {mode: query, query_url: "http://h", ids_from: nope}}
      - {name: q2, driver: otlp, rate: 1/s, params: {mode: query, query_url: "http://h", ids_from: get}}
      - {name: in, driver: otlp, rate: 1/s, params: {endpoint: "127.0.0.1:1", ids_from: q1}}
      - {name: s3, driver: s3, rate: 1/s, params: {endpoint: "http://h:1", bucket: b}}
`, nil)
	wantProblems(t, errs,
		`p.yaml:9:16: params: url: "ftp://x/": scheme must be http or https`,
		`p.yaml:10:20: params: targets -1 is out of range`,
		`p.yaml:11:11: params: unknown key "colour"`,
		`p.yaml:12:87: params: cannot read rules_file: open `,
		`p.yaml:13:9: workload "get" needs rate (open model), concurrency (closed model) or stages: the http driver implies no rate of its own`,
		`p.yaml:14:100: params: ids_from: profile a has no workload "nope" (it has write, rules, get, q1, q2, in, s3)`,
		`p.yaml:15:100: params: ids_from: workload "get" (http) is not an otlp ingest workload`,
		`p.yaml:16:89: params: ids_from is for query mode`,
		`p.yaml:17:51: params: ops get and head read the objects Prepare uploads: set objects`,
	)
}

func TestStoredParamsMaskCredentials(t *testing.T) {
	p, errs := checkText(t, `name: secrets
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: objects
        driver: s3
        concurrency: 1
        params: {endpoint: "http://127.0.0.1:3", bucket: bkt, objects: 1, access_key: AKIA1, secret_key: literal-secret}
      - name: chat
        driver: openai
        rate: 1/s
        params: {url: "http://u:pw@127.0.0.1:4", model: m, prompts: [hi], api_key: "${TOKEN}", headers: {X-Api-Key: lit}}
`, nil)
	wantProblems(t, errs)
	var stored []string
	for _, w := range p.Profiles[0].Workloads {
		stored = append(stored, string(registry.StoredParams(w.Params, w.Driver)))
	}
	described, err := registry.DescribedPlan(p)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(stored, "\n") + "\n" + described
	for _, secret := range []string{"AKIA1", "literal-secret", "pw@", "lit\"", "s3cr3t"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q stored:\n%s", secret, all)
		}
	}
	if !strings.Contains(stored[1], `"api_key":"${TOKEN}"`) {
		t.Errorf("the reference is not kept: %s", stored[1])
	}
}

// TestSettleRate builds the drivers of a remote_write workload without a
// rate and an otlp one at a byte rate, as a phase does.
func TestSettleRate(t *testing.T) {
	p, errs := checkText(t, `name: rates
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: write
        driver: remote_write
        params: {url: "http://127.0.0.1:1/api/v1/write", targets: 4, series_per_target: 500, scrape_interval: 10s, batch: 100}
      - {name: ingest, driver: otlp, rate: 2MB/s, params: {endpoint: "127.0.0.1:1", batch: 2, seed: 7}}
`, nil)
	wantProblems(t, errs)
	inst, err := p.Expand(p.Cells()[0], plan.Builtins{Perflab: "/bin/true", RunDir: "RUN_DIR"})
	if err != nil {
		t.Fatal(err)
	}
	phases, errs := Compile(p, inst, false)
	wantProblems(t, errs)
	ws := phases[0].Workloads
	for i := range ws {
		if err := buildDriver(ws, i); err != nil {
			t.Fatal(err)
		}
	}
	facts, line, err := SettleRate(&ws[0])
	series := ws[0].Eng.Driver.(interface{ ActiveSeries() int64 }).ActiveSeries()
	if want := float64(series) / 10 / 100; err != nil || ws[0].Desc.Rate != want || len(facts) != 1 ||
		!strings.Contains(line, "the remote_write driver's own") {
		t.Errorf("remote_write: rate %v (want %v), facts %v, %q, %v", ws[0].Desc.Rate, want, facts, line, err)
	}
	facts, line, err = SettleRate(&ws[1])
	mean := ws[1].Eng.Driver.(*otlpdriver.Driver).MeanTraceBytes()
	if want := 2e6 / (mean * 2); err != nil || ws[1].Desc.Rate != want || ws[1].Eng.Duration() != 10*time.Second {
		t.Errorf("otlp: rate %v, want %v (mean trace %v B): %v", ws[1].Desc.Rate, want, mean, err)
	}
	if len(facts) != 4 || facts[0].Value != "2MB/s" || facts[3].Name != "traces/s (derived)" ||
		facts[3].Value != figure(2e6/mean) || !strings.Contains(line, "traces/s") {
		t.Errorf("otlp facts %v, line %q", facts, line)
	}
}
