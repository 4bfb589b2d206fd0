package registry

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/plan"
)

// params parses a one-workload plan around the given params mapping.
func params(t *testing.T, text string) plan.Params {
	t.Helper()
	p, err := plan.ParseEnv("p.yaml", []byte(`name: t
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: http
        rate: 1/s
        params:
`+text), func(k string) (string, bool) { return "s3cr3t", k == "TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	return p.Profiles[0].Workloads[0].Params
}

func TestHTTPDriverProblemsInPlace(t *testing.T) {
	ps := params(t, `          url: "ftp://x/"
          method: "G T"
          timeout: -1s
          proto: h2c
          colour: blue
`)
	_, errs := httpDriver(Input{Params: ps, File: "p.yaml", Dir: "/"})
	want := []string{
		`p.yaml:10:16: params: url "ftp://x/": scheme must be http or https`,
		`p.yaml:11:19: params: method "G T" is not a valid HTTP token`,
		`p.yaml:12:20: params: timeout -1s is negative`,
		`p.yaml:14:11: params: unknown key "colour"`,
	}
	got := make([]string, len(errs))
	for i, err := range errs {
		got[i] = err.Error()
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in\n%s", w, all)
		}
	}
}

func TestHTTPDriverSpec(t *testing.T) {
	ps := params(t, `          url: "http://u:${TOKEN}@127.0.0.1:1/x"
          method: post
          body: "12345"
          headers: {Authorization: "Bearer ${TOKEN}", X-Api-Key: literal-key}
`)
	spec, errs := httpDriver(Input{Params: ps, File: "p.yaml", Dir: "/"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if spec.Target != "POST http://u:xxxxx@127.0.0.1:1/x" || spec.OpBytes != 5 {
		t.Errorf("target %q, %d bytes per operation", spec.Target, spec.OpBytes)
	}
	stored := string(StoredParams(ps, "http"))
	if strings.Contains(stored, "s3cr3t") || strings.Contains(stored, "literal-key") || !strings.Contains(stored, "${TOKEN}") {
		t.Errorf("stored params %s", stored)
	}
}

// TestHTTPDriverMergedParams checks params that merge an anchor (<<): the
// merged keys decode and are stored, and a problem with one is placed
// where it is written, in the anchor.
func TestHTTPDriverMergedParams(t *testing.T) {
	p, err := plan.ParseEnv("p.yaml", []byte(`name: t
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: http
        rate: 1/s
        params: &base
          url: "http://127.0.0.1:1/x"
          timeout: -1s
      - {name: v, driver: http, rate: 1/s, params: {<<: *base, method: post, timeout: 2s}}
      - name: u
        driver: http
        rate: 1/s
        params:
          <<: *base
          colour: blue
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := p.Profiles[0].Workloads
	spec, errs := httpDriver(Input{Params: ws[1].Params, File: "p.yaml", Dir: "/"})
	if len(errs) > 0 || spec.Target != "POST http://127.0.0.1:1/x" {
		t.Errorf("flow merge: target %q, problems %v", spec.Target, errs)
	}
	if stored := string(StoredParams(ws[1].Params, "http")); !strings.Contains(stored, `"url":"http://127.0.0.1:1/x"`) {
		t.Errorf("stored params %s", stored)
	}
	_, errs = httpDriver(Input{Params: ws[2].Params, File: "p.yaml", Dir: "/"})
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	want := []string{`p.yaml:11:20: params: timeout -1s is negative`, `p.yaml:18:11: params: unknown key "colour"`}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("no %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
}
