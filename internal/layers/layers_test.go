package layers

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/perflab/perflab/internal/"

// deps is every perflab package under internal/ by its path below
// internal/ (e.g. "driver/http"), with the perflab packages it depends
// on, directly or not, by the same short path. Test files are not
// counted: a test may reach across layers to set something up.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Deps", mod[:len(mod)-1]+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		var own []string
		for _, d := range p.Deps {
			if s, ok := strings.CutPrefix(d, mod); ok {
				own = append(own, s)
			}
		}
		graph[strings.TrimPrefix(p.ImportPath, mod)] = own
	}
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages under internal/, want them all", len(graph))
	}
	return graph
}

// A rule says which packages a package must not depend on.
type rule struct {
	pkg    func(string) bool
	denied func(pkg, dep string) bool
	why    string
}

func is(name string) func(string) bool { return func(p string) bool { return p == name } }

func under(dir string) func(string) bool {
	return func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
}

// aDriver reports whether p is a driver of a protocol: a package below
// internal/driver other than the shared helpers (dial) and the list of
// every driver (registry).
func aDriver(p string) bool {
	name, ok := strings.CutPrefix(p, "driver/")
	return ok && !slices.Contains([]string{"dial", "registry"}, strings.Split(name, "/")[0])
}

var rules = []rule{
	{is("run"), func(_, d string) bool { return under("report")(d) },
		"the run loop decides a run's state on the read model (view); rendering it is report's"},
	{is("secret"), func(string, string) bool { return true },
		"the scrubber is the bottom layer: every package that holds a credential uses it"},
	{aDriver, func(p, d string) bool { return aDriver(d) && strings.Split(d, "/")[1] != strings.Split(p, "/")[1] },
		"a driver shares code with others through driver/dial, not through another driver"},
	{is("fleet/worker"), func(_, d string) bool { return d == "fleet" },
		"a worker speaks the protocol (shard), not the coordinator's code"},
	{is("readback"), func(_, d string) bool { return d == "driver/registry" },
		"reading a run reads what it recorded, never the drivers this build has"},
	{under("report"), func(_, d string) bool { return under("run")(d) || under("readback")(d) },
		"report renders what it is given"},
	{is("readback"), func(_, d string) bool { return d == "report" },
		"reading a run builds its model; report renders it"},
	{is("view"), func(_, d string) bool { return slices.Contains([]string{"report", "readback", "run", "results"}, d) },
		"the read model is what those build, judge and render: it knows none of them"},
	{is("driver"), func(_, d string) bool { return slices.Contains([]string{"view", "analysis", "results"}, d) },
		"a driver knows nothing of the run's model, figures or store: they are built on it"},
}

func TestLayers(t *testing.T) {
	graph := deps(t)
	for _, r := range rules {
		for p, ds := range graph {
			if !r.pkg(p) {
				continue
			}
			for _, d := range ds {
				if r.denied(p, d) {
					t.Errorf("%s depends on %s: %s", p, d, r.why)
				}
			}
		}
	}
}

// The rules see what they are about: each names a package that exists, and
// a graph with the wrong arrow fails them.
func TestLayersCatchAWrongArrow(t *testing.T) {
	graph := deps(t)
	for _, p := range []string{"run", "secret", "driver", "driver/http", "driver/s3", "fleet/worker", "readback", "report", "view"} {
		if _, ok := graph[p]; !ok {
			t.Errorf("no package %s: a rule about it checks nothing", p)
		}
	}
	wrong := map[string]string{"run": "report", "secret": "stats", "driver/s3": "driver/http",
		"fleet/worker": "fleet", "readback": "driver/registry", "report": "run", "view": "results", "driver": "analysis"}
	for p, d := range wrong {
		caught := false
		for _, r := range rules {
			caught = caught || r.pkg(p) && r.denied(p, d)
		}
		if !caught {
			t.Errorf("%s → %s passes the rules", p, d)
		}
	}
	if r := rules[2]; r.denied("driver/s3", "driver/dial") || r.denied("driver/s3", "driver") || aDriver("driver/registry") {
		t.Error("the driver rule denies the shared helpers or the driver interface")
	}
}
