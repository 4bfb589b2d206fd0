package registry

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/driver/interleave"
	"github.com/perflab/perflab/internal/plan"
)

func TestGatewayDriverSpec(t *testing.T) {
	ps := params(t, `          url: "http://127.0.0.1:1/x"
          method: post
          body: "12345"
          gateway: {url: "http://127.0.0.1:2/gw/x", component: gw}
`)
	spec, errs := withGateway(httpDriver)(Input{Params: ps, File: "p.yaml", Dir: "/"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if spec.Target != "POST http://127.0.0.1:1/x direct; POST http://127.0.0.1:2/gw/x through the gateway" || spec.OpBytes != 5 {
		t.Errorf("target %q, %d bytes per operation", spec.Target, spec.OpBytes)
	}
	d, err := spec.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*interleave.Driver); !ok {
		t.Errorf("driver %T, want *interleave.Driver", d)
	}
	d.(*interleave.Driver).Close()
	plain, errs := withGateway(httpDriver)(Input{Params: params(t, `          url: "http://127.0.0.1:1/"`+"\n"), File: "p.yaml"})
	if len(errs) > 0 || plain.Target != "GET http://127.0.0.1:1/" {
		t.Errorf("without a gateway: %q, %v", plain.Target, errs)
	}
}

func TestGatewayDriverProblemsInPlace(t *testing.T) {
	for _, c := range []struct {
		params string
		want   []string
	}{
		{`          url: "http://127.0.0.1:1/"
          gateway: {url: "ftp://127.0.0.1:2/", component: "Gate Way", colour: blue}
`, []string{`p.yaml:11:71: params.gateway: unknown key "colour"`}},
		{`          url: "http://127.0.0.1:1/"
          gateway: {url: "ftp://127.0.0.1:2/", component: "Gate Way"}
`, []string{`p.yaml:11:26: params: url "ftp://127.0.0.1:2/": scheme must be http or https`,
			`p.yaml:11:59: params.gateway.component: "Gate Way" is not a component name`}},
		{`          method: GET
          gateway: {component: gw}
`, []string{`p.yaml:11:20: params.gateway: url is required`, `p.yaml:11:20: params.gateway: the workload needs params.url`}},
		{`          url: "http://127.0.0.1:1/"
          gateway: "http://127.0.0.1:2/"
`, []string{`p.yaml:11:20: params.gateway: want a mapping`}},
	} {
		_, errs := withGateway(httpDriver)(Input{Params: params(t, c.params), File: "p.yaml", Dir: "/"})
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		all := strings.Join(got, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("no %q in\n%s", w, all)
			}
		}
	}
}

func TestGatewayComponentMustExist(t *testing.T) {
	p, err := plan.ParseEnv("p.yaml", []byte(`name: t
components:
  - {name: up, attach: {pid: 1}}
profiles:
  - name: a
    duration: 1s
    workloads:
      - name: w
        driver: http
        rate: 1/s
        params: {url: "http://127.0.0.1:1/", gateway: {url: "http://127.0.0.1:2/", component: gw}}
      - name: v
        driver: http
        rate: 1/s
        params: {url: "http://127.0.0.1:1/", gateway: {url: "http://127.0.0.1:2/", component: up}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := GatewayProblems(p)
	if len(errs) != 1 || errs[0].Error() != `p.yaml:11:95: params.gateway.component: no component "gw" in the plan; it has components up` {
		t.Errorf("problems %v", errs)
	}
}
