package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
)

// The tests of this file fail when perflab http and a plan file part
// ways again: perflab http builds a plan from its flags and checks and
// compiles it as perflab run does a plan file, so the same values give the
// same problems, and the same workload, through both.

// flagKeys is the plan key each flag of perflab http sets, as the plan's
// problems name it.
var flagKeys = map[string]string{
	"--vus-min": "vus.min", "--vus-max": "vus.max", "--concurrency": "concurrency", "--backlog": "backlog",
	"--grace": "grace", "--warmup": "warmup", "--duration": "the duration", "-d": "body", "--body-file": "body_file",
	"--dispatch-quantum": "dispatch_quantum",
}

// problemLines is what perflab refused, one problem a line, without what
// says only where each is: a plan file's position and "params: ", the flag
// in front of a problem with its value, and the flags' names, made the
// plan keys they set.
func problemLines(t *testing.T, stderr string) []string {
	t.Helper()
	prefix := regexp.MustCompile(`^(\S+\.yaml:\d+(:\d+)?: |--?[a-z-]+: )?(params: )?`)
	flagName := regexp.MustCompile(`(^|[ (])(--?[a-z][a-z-]*)`)
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "  ") && !strings.Contains(line, ".yaml:") {
			continue // the heading, the hint
		}
		line = prefix.ReplaceAllString(strings.TrimSpace(line), "")
		line = flagName.ReplaceAllStringFunc(line, func(m string) string {
			sep, name := m[:len(m)-len(strings.TrimLeft(m, " ("))], strings.TrimLeft(m, " (")
			if key, ok := flagKeys[name]; ok {
				return sep + key
			}
			return m
		})
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// writePlanFile writes a plan of one workload "http" of the http driver
// in a profile of duration 2s, with the given workload keys and params.
func writePlanFile(t *testing.T, profile, workload, params string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	text := "name: http\nprofiles:\n  - name: http\n    duration: 2s\n" + profile +
		"    workloads:\n      - name: http\n        driver: http\n" + workload +
		"        params: {url: \"http://127.0.0.1:1/\"" + params + "}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTTPFlagsAndPlanSayTheSame: the same wrong values, as perflab http's
// flags and as a plan file's keys, are refused with the same problems,
// worded each in its own terms: the body and body_file checks, the VU
// pool's, the durations', the closed model's are one check, not two.
func TestHTTPFlagsAndPlanSayTheSame(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		flags                     []string
		profile, workload, params string
	}{
		{[]string{"--rate", "10/s", "-d", "x", "--body-file", missing}, "", "        rate: 10/s\n",
			`, body: x, body_file: "` + missing + `"`},
		{[]string{"--rate", "10/s", "--body-file", missing}, "", "        rate: 10/s\n", `, body_file: "` + missing + `"`},
		{[]string{"--rate", "10/s", "--vus-min", "20", "--vus-max", "10", "--backlog", "-1", "--grace", "-1s"}, "",
			"        rate: 10/s\n        vus: {min: 20, max: 10}\n        backlog: -1\n        grace: -1s\n", ""},
		{[]string{"--rate", "10/s", "--vus-max", "0", "--vus-min", "-1", "--dispatch-quantum", "0s"}, "",
			"        rate: 10/s\n        vus: {min: -1, max: 0}\n        dispatch_quantum: 0s\n", ""},
		{[]string{"-c", "0", "--warmup", "2s"}, "    warmup: 2s\n", "        concurrency: 0\n", ""},
		{[]string{"--rate", "10/s", "--proto", "h9", "--follow-redirects", "99", "-m", "G T"}, "", "        rate: 10/s\n",
			`, proto: h9, follow_redirects: 99, method: "G T"`},
	} {
		code, _, flagErrs := mainOut(append([]string{"http", "http://127.0.0.1:1/", "--duration", "2s", "--out", t.TempDir()}, c.flags...)...)
		path := writePlanFile(t, c.profile, c.workload, c.params)
		planCode, _, planErrs := mainOut("plan", "check", path)
		if code != ExitUsage || planCode != ExitUsage {
			t.Errorf("%v: exit %d, plan check exit %d; want %d", c.flags, code, planCode, ExitUsage)
		}
		got, want := problemLines(t, flagErrs), problemLines(t, planErrs)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%v: perflab http says\n  %s\nthe plan\n  %s", c.flags, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

// compiled is the workload of a plan as a run has it, before its driver
// is built.
func compiled(t *testing.T, p *plan.Plan) run.Workload {
	t.Helper()
	b, err := run.Builtins("RUN_DIR")
	if err != nil {
		t.Fatal(err)
	}
	if errs := run.CheckBuilt(p, b); len(errs) > 0 {
		t.Fatal(errs)
	}
	inst, err := p.Expand(p.Cells()[0], b)
	if err != nil {
		t.Fatal(err)
	}
	phases, errs := run.Compile(p, inst, false)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return phases[0].Workloads[0]
}

// TestHTTPFlagsAndPlanMakeTheSameWorkload: perflab http's defaults are
// the plan's (the VU pool from --vus-min or --vus-max alone, the grace,
// the dispatch quantum), so its flags and the plan keys they stand for
// make the same workload; only its name and stored params, in their
// place of an implicit plan, differ.
func TestHTTPFlagsAndPlanMakeTheSameWorkload(t *testing.T) {
	for _, c := range []struct {
		flags    []string
		workload string
	}{
		{[]string{"--rate", "10/s"}, "        rate: 10/s\n"},
		{[]string{"--rate", "10/s", "--vus-max", "5"}, "        rate: 10/s\n        vus: {max: 5}\n"},
		{[]string{"--rate", "10/s", "--vus-min", "2000"}, "        rate: 10/s\n        vus: {min: 2000}\n"},
		{[]string{"--rate", "10/s", "--backlog", "7", "--grace", "1s"}, "        rate: 10/s\n        backlog: 7\n        grace: 1s\n"},
		{[]string{"-c", "8"}, "        concurrency: 8\n"},
		{nil, "        concurrency: 50\n"},
	} {
		var f httpFlags
		fs := flag.NewFlagSet("http", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.register(fs)
		if err := fs.Parse(append([]string{"--duration", "2s"}, c.flags...)); err != nil {
			t.Fatal(err)
		}
		fromFlags, _, err := f.checkedPlan("http://127.0.0.1:1/", func(name string) bool { return set(fs, name) })
		if err != nil {
			t.Fatalf("%v: %v", c.flags, err)
		}
		fromFile, err := plan.Load(writePlanFile(t, "", c.workload, ""))
		if err != nil {
			t.Fatal(err)
		}
		a, b := compiled(t, fromFlags), compiled(t, fromFile)
		if a.Desc.Name != "http" || a.Desc.Profile != "" || b.Desc.Name != "http/http" {
			t.Errorf("%v: named %q in profile %q; from the file %q", c.flags, a.Desc.Name, a.Desc.Profile, b.Desc.Name)
		}
		for _, d := range []*results.Workload{&a.Desc, &b.Desc} {
			d.Name, d.Profile, d.Params = "", "", nil
		}
		if a.Desc.Target != "GET http://127.0.0.1:1/" || !equalDesc(a.Desc, b.Desc) || a.Eng.Quantum != b.Eng.Quantum || a.Eng.Grace != b.Eng.Grace {
			t.Errorf("%v: perflab http makes\n  %+v (quantum %v)\nthe plan\n  %+v (quantum %v)", c.flags, a.Desc, a.Eng.Quantum, b.Desc, b.Eng.Quantum)
		}
	}
}

func equalDesc(a, b results.Workload) bool {
	return a.Short == b.Short && a.Driver == b.Driver && a.Target == b.Target && a.Model == b.Model && a.Rate == b.Rate &&
		a.VUsMin == b.VUsMin && a.VUsMax == b.VUsMax && a.Backlog == b.Backlog && a.Concurrency == b.Concurrency &&
		a.Duration == b.Duration && a.Grace == b.Grace
}

// TestHTTPSLOScopeIsThePlans: a --slo gate scoped to another workload is
// refused by the plan's check, in perflab http's words; one scoped to
// its workload runs.
func TestHTTPSLOScopeIsThePlans(t *testing.T) {
	var f httpFlags
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	f.register(fs)
	for _, c := range []struct {
		slo, want string
	}{
		{`p99{workload="http"} < 1s`, ""},
		{`p99{workload="web"} < 1s`, `--slo 'p99{workload="web"} < 1s': perflab http runs one workload, "http", not "web"`},
		{`p99{workload="low/http"} < 1s`, `perflab http runs one workload, "http", not "low/http"`},
	} {
		f.rate, f.duration, f.slo = "10/s", 2e9, listFlag{c.slo}
		_, _, err := f.checkedPlan("http://127.0.0.1:1/", func(name string) bool { return name == "rate" })
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.slo, err, c.want)
		}
	}
}
