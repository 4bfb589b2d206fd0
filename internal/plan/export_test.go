package plan

import (
	"strings"
	"testing"
	"time"
)

const exportPlan = `name: x
export:
  - kind: remote-write
    url: http://127.0.0.1:8428/api/v1/write
    headers: {Authorization: "Bearer ${MY_TOKEN}", X-Scope-OrgID: team-a}
    interval: 5s
    native_histograms: true
  - kind: otlp
    url: grpc://127.0.0.1:4317
` + okProfiles

func TestDecodeExport(t *testing.T) {
	p, err := ParseEnv("plan.yaml", []byte(exportPlan), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Export) != 2 {
		t.Fatalf("export %+v", p.Export)
	}
	rw := p.Export[0]
	if rw.Kind != ExportRemoteWrite || rw.URL != "http://127.0.0.1:8428/api/v1/write" || rw.Interval != 5*time.Second || !rw.NativeHistograms ||
		len(rw.Headers) != 2 || rw.Headers[0] != (Header{"Authorization", "Bearer ${MY_TOKEN}"}) || rw.Headers[1].Name != "X-Scope-OrgID" {
		t.Errorf("decoded %+v", rw)
	}
	got, err := p.ExpandExports()
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Headers[0].Value != "Bearer "+secret || got[1].URL != "grpc://127.0.0.1:4317" || p.Export[0].Headers[0].Value != "Bearer ${MY_TOKEN}" {
		t.Errorf("expanded %+v, plan %+v", got, p.Export)
	}
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d), secret) || !strings.Contains(string(d), `"export":[{"kind":"remote-write","url":"http://127.0.0.1:8428/api/v1/write","headers":{"Authorization":"Bearer ${MY_TOKEN}","X-Scope-OrgID":"team-a"},"interval":"5s","native_histograms":true}`) {
		t.Errorf("described %s", d)
	}
	if _, err := ParseEnv("plan.yaml", d, testEnv); err != nil {
		t.Errorf("the description does not parse: %v", err)
	}
}

func TestErrorsExport(t *testing.T) {
	plan := func(body string) string { return "name: x\nexport:\n" + body + okProfiles }
	runErrorCases(t, []errorCase{
		{"unknown kind and key", plan("  - {kind: influx, url: 'http://a/', every: 1s}\n"), []string{
			`plan.yaml:3:12: export kind "influx": want remote-write or otlp`,
			`plan.yaml:3:38: export: unknown key "every"; want one of: kind, url, headers, interval, native_histograms`}},
		{"missing kind and url", plan("  - {interval: 0s}\n"), []string{
			`plan.yaml:3:5: export needs a kind: remote-write or otlp`,
			`plan.yaml:3:5: export needs a url`,
			`plan.yaml:3:16: interval 0s must be > 0`}},
		{"grpc for remote write", plan("  - {kind: remote-write, url: 'grpc://a:4317'}\n"), []string{
			`plan.yaml:3:31: url "grpc://a:4317": want an http:// or https:// URL`}},
		{"literal token", plan("  - {kind: otlp, url: 'http://a/', headers: {Authorization: Bearer abc}}\n"), []string{
			`plan.yaml:3:61: headers.Authorization: write the secret as ${VAR} and export VAR: secrets come from the environment, never the plan`}},
		{"password in url", plan("  - {kind: otlp, url: 'http://u:pw@a/'}\n"), []string{
			`plan.yaml:3:23: url http://u:xxxxx@a/ holds a credential: write it as ${VAR} and export VAR: secrets come from the environment, never the plan`}},
		{"cell variable", plan("  - {kind: otlp, url: 'http://{{cell}}/'}\n"), []string{
			`plan.yaml:3:23: url: {{cell}} has no value in an export, which is the same for every cell; only ${VAR} may be used`}},
		{"unset variable", plan("  - {kind: otlp, url: 'http://a/', headers: {Authorization: 'Bearer ${NOPE}'}}\n"), []string{
			`plan.yaml:3:61: environment variable NOPE is not set: export it before running the plan`}},
		{"native histograms over otlp", plan("  - {kind: otlp, url: 'http://a/', native_histograms: true}\n"), []string{
			`plan.yaml:3:55: native_histograms: Prometheus native histograms are sent over remote-write only`}},
		{"native histograms not a bool", plan("  - {kind: remote-write, url: 'http://a/', native_histograms: yes please}\n"), []string{
			`plan.yaml:3:63: native_histograms: want true or false, got "yes please"`}},
		{"not a list", plan("  kind: otlp\n"), []string{
			`plan.yaml:3:3: export: want a list, got a mapping`}},
	})
}
