package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// FuzzParse checks that Parse never panics, that every failure is Errors,
// and that an accepted plan is valid, has cells, expands, and describes
// itself as a plan that parses back to the same description without the
// values of environment variables. The corpus in testdata/fuzz/FuzzParse
// starts with the sample plans in testdata.
func FuzzParse(f *testing.F) {
	for _, path := range testdataPlans(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseEnv("fuzz.yaml", data, testEnv)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error is %T, not Errors: %v", err, err)
			}
			return
		}
		if errs := p.Validate(); len(errs) > 0 {
			t.Fatalf("Parse accepted a plan that Validate rejects: %v", errs)
		}
		cells := p.Cells()
		if len(cells) == 0 {
			t.Fatal("an accepted plan has no cells")
		}
		inst, err := p.Expand(cells[len(cells)-1], Builtins{Perflab: "/bin/perflab", RunDir: "/runs/r"})
		if err != nil {
			t.Fatalf("Expand: %v", err)
		}
		for _, pr := range inst.Profiles {
			for _, w := range pr.Workloads {
				var m map[string]any
				_ = w.Params.Decode(&m) // may fail, must not panic
				if js, err := w.Params.JSON(); err == nil && !json.Valid(js) {
					t.Fatalf("Params.JSON is not JSON: %s", js)
				}
			}
		}
		checkDescription(t, p, data)
	})
}

// checkDescription checks that p's description parses back to itself and
// holds no secret that the plan text did not hold literally.
func checkDescription(t *testing.T, p *Plan, data []byte) {
	t.Helper()
	d, err := p.Describe()
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	q, err := ParseEnv("fuzz.yaml", d, testEnv)
	if err != nil {
		t.Fatalf("the description does not parse: %v\n%s", err, d)
	}
	d2, err := q.Describe()
	if err != nil || !bytes.Equal(d, d2) {
		t.Fatalf("the description changed on a round trip: %v\n%s\n%s", err, d, d2)
	}
	for _, s := range p.Secrets() {
		if bytes.Contains(d, []byte(s)) && !bytes.Contains(data, []byte(s)) {
			t.Fatalf("the description holds the secret %q", s)
		}
	}
}
