package plan

import (
	"strings"
	"testing"
	"time"
)

func TestDecodePrometheus(t *testing.T) {
	p := loadTestdata(t, "prometheus.yaml")
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	c := p.Components[1]
	pr := c.Prometheus
	if c.Observe != ObservePrometheus || pr == nil || pr.URL != "http://127.0.0.1:9090" || pr.BearerToken != "${MY_TOKEN}" ||
		pr.Step != 15*time.Second || pr.RateWindow != time.Minute || pr.Preset != "kubernetes" || pr.Namespace != "{{ns}}" ||
		pr.Pod != "tempo-(ingester|distributor)-.*" || pr.Container != "tempo" || len(pr.Queries) != 1 {
		t.Fatalf("decoded %+v %+v", c, pr)
	}
	inst, err := p.Expand(p.Cells()[0], Builtins{Perflab: "/bin/perflab", RunDir: "/tmp/run"})
	if err != nil {
		t.Fatal(err)
	}
	got := inst.Components[1].Prometheus
	if got.BearerToken != secret || got.Namespace != "tempo" || !strings.Contains(got.Queries[0].Expr, `namespace="tempo"`) {
		t.Errorf("expanded %+v", got)
	}
	node := inst.Components[2].Prometheus
	if node.Username != "perflab" || node.Password != secret || node.SplitLabel != "instance" || node.SplitRegex != "(.*):9100" ||
		node.Queries[1].Metric != "metric:up" {
		t.Errorf("expanded %+v", node)
	}
	if pr.BearerToken != "${MY_TOKEN}" {
		t.Error("Expand changed the plan")
	}
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d), secret) {
		t.Errorf("the description holds the secret: %s", d)
	}
}

func TestErrorsPrometheus(t *testing.T) {
	comp := func(body string) string {
		return "name: x\ncomponents:\n  - name: c\n" + body + okProfiles
	}
	runErrorCases(t, []errorCase{
		{"prometheus without observe", comp("    attach: {pid: 1}\n    prometheus: {url: 'http://a:9090', preset: self, instance: a}\n"), []string{
			`plan.yaml:5:17: component "c" has a prometheus section but is observed locally; add observe: prometheus`}},
		{"observe without prometheus", comp("    observe: prometheus\n"), []string{
			`plan.yaml:4:14: component "c" needs a prometheus section (url and a preset or queries)`}},
		{"unknown observe", comp("    attach: {pid: 1}\n    observe: remote\n"), []string{
			`plan.yaml:5:14: observe "remote": want local or prometheus`}},
		{"local observations", comp("    observe: prometheus\n    metrics: http://a/metrics\n    prometheus: {url: 'http://a:9090', preset: self, instance: a}\n"), []string{
			`plan.yaml:5:14: component "c" is observed through prometheus: metrics, metric_names and data_dirs are local observations; use prometheus.queries`}},
		{"literal token", comp("    observe: prometheus\n    prometheus: {url: 'http://a:9090', bearer_token: abc, preset: self, instance: a}\n"), []string{
			`plan.yaml:5:54: bearer_token: write the secret as ${VAR} and export VAR: secrets come from the environment, never the plan`}},
		{"preset problems", comp("    observe: prometheus\n    prometheus:\n      url: ftp://a\n      preset: kubernetes\n      pod: '('\n      instance: a\n      step: 0s\n"), []string{
			`plan.yaml:6:12: url "ftp://a": want an http:// or https:// URL`,
			`plan.yaml:7:15: preset kubernetes needs namespace`,
			"plan.yaml:8:12: pod \"(\": not a regular expression: error parsing regexp: missing closing ): `(`",
			`plan.yaml:9:17: instance is not a selector of preset kubernetes; it is for node-exporter, self`,
			`plan.yaml:10:13: step 0s must be > 0`}},
		{"unknown preset and metric", comp("    observe: prometheus\n    prometheus:\n      url: http://a\n      preset: kubelet\n      queries: {cpu: 'x', cpu_cores: ''}\n"), []string{
			`plan.yaml:7:15: preset "kubelet": want one of kubernetes, node-exporter, process-exporter, self`,
			`plan.yaml:8:22: queries: "cpu" is not a metric perflab knows; want one of ` + strings.Join(queryMetrics, ", ") + `, or metric:<name>`,
			`plan.yaml:8:38: queries.cpu_cores: empty PromQL`}},
		{"capture group on a started component", comp("    run: {command: x}\n    observe: prometheus\n    prometheus: {url: http://a, preset: self, instance: '(a|b):1'}\n"), []string{
			`plan.yaml:6:57: instance "(a|b):1" has a capture group, which splits a component in several; component "c" is one process that perflab starts: use (?:…)`}},
		{"split", comp("    observe: prometheus\n    prometheus:\n      url: http://a\n      queries: {cpu_cores: x}\n      split: {label: pod}\n"), []string{
			`plan.yaml:8:14: split needs a label and a regex`}},
	})
}
