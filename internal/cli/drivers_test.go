package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine"
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
	_, errs := httpDriver(driverInput{params: ps, file: "p.yaml", dir: "/"})
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
	spec, errs := httpDriver(driverInput{params: ps, file: "p.yaml", dir: "/"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if spec.target != "POST http://u:xxxxx@127.0.0.1:1/x" || spec.opBytes != 5 {
		t.Errorf("target %q, %d bytes per operation", spec.target, spec.opBytes)
	}
	stored := string(storedParams(ps, "http"))
	if strings.Contains(stored, "s3cr3t") || strings.Contains(stored, "literal-key") || !strings.Contains(stored, "${TOKEN}") {
		t.Errorf("stored params %s", stored)
	}
}

func TestPhaseWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	sum := func(start, ws, we, end float64) engine.Summary {
		return engine.Summary{Start: at(start), LoadEnd: at(end), Window: engine.Window{Start: at(ws), End: at(we), Rule: "r"}}
	}
	sums := []engine.Summary{sum(0, 1, 10, 10), sum(0, 2, 9, 9.5)}
	w, ok := phaseWindow(0, sums)
	if !ok || !w.Start.Equal(at(2)) || !w.End.Equal(at(9)) || !w.loadEnd.Equal(at(10)) {
		t.Errorf("without warm-up: %v–%v, load end %v", w.Start, w.End, w.loadEnd)
	}
	w, _ = phaseWindow(3*time.Second, sums)
	if !w.Start.Equal(at(3)) || !w.End.Equal(at(10)) || !strings.Contains(w.Rule, "warm-up of 3s") {
		t.Errorf("with warm-up: %v–%v (%s)", w.Start, w.End, w.Rule)
	}
	if _, ok := phaseWindow(0, []engine.Summary{{}}); ok {
		t.Error("a phase whose workloads never started has a window")
	}
	// The load starts after the phase does: after the drivers' preparation,
	// and in a distributed run at the instant announced 2 s ahead. The
	// warm-up counts from the load's start, as each workload's own window
	// does (and perflab merge's), not from the phase's.
	late := []engine.Summary{sum(2, 3, 10, 10), sum(2.01, 3.01, 10, 10)}
	w, _ = phaseWindow(time.Second, late)
	if !w.Start.Equal(at(3)) || !w.End.Equal(at(10)) {
		t.Errorf("load started 2 s into the phase, warm-up 1s: %v–%v, want %v–%v", w.Start, w.End, at(3), at(10))
	}
}
