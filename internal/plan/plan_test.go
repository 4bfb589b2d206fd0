package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const secret = "s3cr3t-token"

// testEnv is the environment the tests parse with: MY_TOKEN and EMPTY are
// set, nothing else.
func testEnv(name string) (string, bool) {
	switch name {
	case "MY_TOKEN":
		return secret, true
	case "EMPTY":
		return "", true
	}
	return "", false
}

// mustParse parses text and fails the test on an error.
func mustParse(t *testing.T, text string) *Plan {
	t.Helper()
	p, err := ParseEnv("plan.yaml", []byte(text), testEnv)
	if err != nil {
		t.Fatalf("ParseEnv: %v", err)
	}
	return p
}

// loadTestdata parses testdata/name.
func loadTestdata(t *testing.T, name string) *Plan {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseEnv(path, data, testEnv)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func testdataPlans(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no testdata plans: %v", err)
	}
	return names
}

// TestRoundTrip checks that every sample plan is valid and that its
// description parses back into the same plan.
func TestRoundTrip(t *testing.T) {
	for _, path := range testdataPlans(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			p := loadTestdata(t, filepath.Base(path))
			if errs := p.Validate(); len(errs) > 0 {
				t.Fatalf("Validate: %v", errs)
			}
			d1, err := p.Describe()
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseEnv(path, d1, testEnv)
			if err != nil {
				t.Fatalf("description does not parse: %v\n%s", err, d1)
			}
			d2, err := q.Describe()
			if err != nil {
				t.Fatal(err)
			}
			if string(d1) != string(d2) {
				t.Errorf("description changed on a round trip:\n%s\n%s", d1, d2)
			}
			if !reflect.DeepEqual(p.Cells(), q.Cells()) {
				t.Errorf("cells changed on a round trip")
			}
			if q.ResultInterval != p.ResultInterval || q.SampleInterval != p.SampleInterval {
				t.Errorf("intervals %v and %v on a round trip, want %v and %v", q.ResultInterval, q.SampleInterval, p.ResultInterval, p.SampleInterval)
			}
		})
	}
}

// TestDecodeFull checks the decoded values of a plan that uses every key.
func TestDecodeFull(t *testing.T) {
	p := loadTestdata(t, "full.yaml")
	if p.Name != "gateway-overhead" || p.SampleInterval != 500*time.Millisecond || p.ResultInterval != 250*time.Millisecond ||
		p.StopGrace != 15*time.Second || p.Repeat != 2 {
		t.Errorf("plan fields: %q %v %v %v repeat %d", p.Name, p.SampleInterval, p.ResultInterval, p.StopGrace, p.Repeat)
	}
	abs, _ := filepath.Abs("testdata")
	if p.Dir != abs || p.File != filepath.Join("testdata", "full.yaml") {
		t.Errorf("File, Dir = %q, %q", p.File, p.Dir)
	}
	if len(p.Components) != 4 {
		t.Fatalf("%d components", len(p.Components))
	}
	prov := p.Components[0]
	wantEnv := []EnvVar{{"GOMEMLIMIT", "{{gomemlimit}}"}, {"TOKEN", "${MY_TOKEN}"},
		{"LITERAL", "$${NOT_EXPANDED} and {{{{braces}}"}}
	if !reflect.DeepEqual(prov.Run.Env, wantEnv) {
		t.Errorf("env = %v, want %v (in file order, unexpanded)", prov.Run.Env, wantEnv)
	}
	if r := prov.Run.Ready; r.HTTP != "http://127.0.0.1:18090/healthz" || r.Timeout != 20*time.Second {
		t.Errorf("ready = %+v", r)
	}
	if prov.Run.StopGrace != 5*time.Second || p.Components[1].Run.StopGrace != 15*time.Second {
		t.Errorf("stop grace %v, %v: want 5s and the plan's 15s", prov.Run.StopGrace, p.Components[1].Run.StopGrace)
	}
	if g := p.Components[1].Run.Ready; g.TCP != "127.0.0.1:18091" || g.Timeout != DefaultReadyTimeout {
		t.Errorf("gateway ready = %+v", g)
	}
	if a := p.Components[2].Attach; a == nil || a.PIDFile != "run/nginx.pid" {
		t.Errorf("attach = %+v", a)
	}
	small, ramp := p.Profiles[0], p.Profiles[1]
	chat := small.Workloads[0]
	if chat.Model != Open || chat.Rate != (Rate{PerSecond: 500}) || chat.VUs != (VUs{20, 200}) ||
		chat.Backlog != 10 || chat.DispatchQuantum != 250*time.Microsecond || chat.Grace != 2*time.Second {
		t.Errorf("chat = %+v", chat)
	}
	if d := small.Workloads[1]; d.Model != Closed || d.Concurrency != 4 || d.VUs != (VUs{}) || d.Grace != DefaultGrace {
		t.Errorf("direct = %+v", d)
	}
	ingest := ramp.Workloads[0]
	wantStages := []Stage{{Duration: 20 * time.Second, Rate: Rate{BytesPerSecond: 5.8e6}},
		{Duration: 40 * time.Second, Rate: Rate{BytesPerSecond: 5.8e6}}}
	if ingest.StartRate != (Rate{BytesPerSecond: 1e6}) || !sameStages(ingest.Stages, wantStages) ||
		ingest.VUs != (VUs{DefaultVUsMin, 50}) {
		t.Errorf("ingest = %+v", ingest)
	}
	readers := ramp.Workloads[1]
	if readers.Model != Closed || readers.StartConcurrency != 1 || readers.Stages[0].Concurrency != 8 {
		t.Errorf("readers = %+v", readers)
	}
}

func sameStages(a, b []Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Duration != b[i].Duration || a[i].Rate != b[i].Rate || a[i].Concurrency != b[i].Concurrency {
			return false
		}
	}
	return true
}

func TestDefaults(t *testing.T) {
	p := loadTestdata(t, "minimal.yaml")
	w := p.Profiles[0].Workloads[0]
	if p.SampleInterval != DefaultSampleInterval || p.ResultInterval != DefaultResultInterval || p.StopGrace != DefaultStopGrace || w.Grace != DefaultGrace ||
		w.VUs != (VUs{DefaultVUsMin, DefaultVUsMax}) || w.Model != Open || p.Profiles[0].Warmup != 0 || p.Repeat != 1 {
		t.Errorf("defaults not applied: %+v %+v", p, w)
	}
	for _, tc := range []struct {
		vus  string
		want VUs
	}{
		{"{min: 2000}", VUs{2000, 2000}},
		{"{max: 5}", VUs{5, 5}},
		{"{min: 3}", VUs{3, DefaultVUsMax}},
		{"{max: 50}", VUs{DefaultVUsMin, 50}},
	} {
		p := mustParse(t, "name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, vus: "+
			tc.vus+"}]}]\n")
		if got := p.Profiles[0].Workloads[0].VUs; got != tc.want {
			t.Errorf("vus %s: got %+v, want %+v", tc.vus, got, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Setenv("MY_TOKEN", secret)
	if _, err := Load(filepath.Join("testdata", "full.yaml")); err != nil {
		t.Errorf("Load: %v", err)
	}
	_, err := Load(filepath.Join("testdata", "missing.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), "cannot read plan: ") {
		t.Errorf("Load of a missing file: %v", err)
	}
	var errs Errors
	if errors.As(err, &errs) {
		t.Errorf("a missing file is not a plan problem: %v", errs)
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "p.yaml", Line: 3, Col: 7, Msg: "bad"}, "p.yaml:3:7: bad"},
		{Error{File: "p.yaml", Line: 3, Msg: "bad"}, "p.yaml:3: bad"},
		{Error{File: "p.yaml", Msg: "bad"}, "p.yaml: bad"},
		{Error{Msg: "bad"}, "bad"},
		// A problem with a flag's value names the flag, once.
		{Error{Flag: "--proto", Msg: `proto "h9" is unknown`}, `--proto: proto "h9" is unknown`},
		{Error{Flag: "--vus-min", Msg: "--vus-min 20 is larger than --vus-max 10"}, "--vus-min 20 is larger than --vus-max 10"},
		{Error{Flag: "-d", Msg: "give -d or --body-file, not both"}, "give -d or --body-file, not both"},
		{Error{Flag: "-d", Msg: "--duration 1s"}, "-d: --duration 1s"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

// TestFormatDocExample checks that the example in docs/format/plan.md is a
// valid plan.
func TestFormatDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "format", "plan.md"))
	if err != nil {
		t.Skipf("no format document: %v", err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml example in docs/format/plan.md")
	}
	p, err := ParseEnv("plan.md", []byte(example), testEnv)
	if err != nil {
		t.Fatalf("the documented example is not a valid plan:\n%v", err)
	}
	if n := len(p.Cells()); n != 4 {
		t.Errorf("the example has %d cells; the document says 4", n)
	}
}
