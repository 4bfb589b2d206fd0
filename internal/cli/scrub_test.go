package cli

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
)

// TestPlanScrubber: the scrubber of a plan replaces each credential it
// holds, by its reference when it came from the environment, by
// [redacted] when written literally; a value too short to tell from
// other text is left.
func TestPlanScrubber(t *testing.T) {
	p, err := plan.ParseEnv("p.yaml", []byte(`name: s
components:
  - name: c
    run: {command: x, env: {API_KEY: literal-env-key, MODE: fast-mode-value, T: "${TOKEN}"}}
  - name: remote
    observe: prometheus
    prometheus: {url: "https://u:prom-url-pass@127.0.0.1:9", bearer_token: "${TOKEN}", preset: self, instance: "x"}
profiles:
  - name: a
    duration: 10s
    workloads:
      - name: objects
        driver: s3
        concurrency: 1
        params: {endpoint: "http://127.0.0.1:3", bucket: bkt, objects: 1, access_key: AKIALITERAL, secret_key: abc}
      - name: get
        driver: http
        rate: 1/s
        params: {url: "http://u:url-password@127.0.0.1:4/", headers: {Authorization: "Bearer literal-bearer", X-Trace: trace-value-1}}
`), func(k string) (string, bool) { return "s3cr3t", k == "TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	s := registry.Scrubber(p)
	in := "s3cr3t literal-env-key fast-mode-value prom-url-pass AKIALITERAL abc url-password Bearer literal-bearer trace-value-1"
	want := "${TOKEN} [redacted] fast-mode-value [redacted] [redacted] abc [redacted] Bearer [redacted] trace-value-1"
	if got := s.String(in); got != want {
		t.Errorf("scrubbed\n%s\nwant\n%s", got, want)
	}
	var b strings.Builder
	e := &env{stdout: &b, stderr: &b}
	e.useScrubber(s)
	e.stderr.Write([]byte("bad token Bearer literal-bearer\n"))
	if b.String() != "bad token Bearer [redacted]\n" || e.scrub != s {
		t.Errorf("through the terminal: %q", b.String())
	}
}
