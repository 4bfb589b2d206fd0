package plan

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOutput: output's files decode, a relative one resolves against the
// plan's directory and an absolute one stays; an unknown key, a
// directory and a list are refused at their line.
func TestOutput(t *testing.T) {
	dir := t.TempDir()
	p, err := ParseEnv(filepath.Join(dir, "plan.yaml"), []byte("name: x\noutput: {junit: ci/junit.xml, csv: /tmp/x.csv}\n"+okProfiles), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.OutputPath(p.Output.JUnit); got != filepath.Join(p.Dir, "ci/junit.xml") || !filepath.IsAbs(got) {
		t.Errorf("junit: %q", got)
	}
	if got := p.OutputPath(p.Output.CSV); got != "/tmp/x.csv" {
		t.Errorf("csv: %q", got)
	}
	got := parseErrors(t, "name: x\noutput:\n  junit: out/\n  csv: [a]\n  html: r.html\n"+okProfiles)
	for _, want := range []string{
		`plan.yaml:3:10: junit: want the path of a file, e.g. perflab-junit.xml, got "out/"`,
		`plan.yaml:4:8: csv: want a string, got a list`,
		`plan.yaml:5:3: output: unknown key "html"; want one of: junit, csv`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
}
