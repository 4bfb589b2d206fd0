package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFlagsRefused: bad --export and --export-header values of
// perflab http and run are refused, every problem listed, exit 2, before
// any connection or run directory.
func TestExportFlagsRefused(t *testing.T) {
	url, conns := countingListener(t)
	out := t.TempDir()
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("name: p\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: http, rate: 1/s, params: {url: '"+
		url+"'}}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--export", "influx=http://127.0.0.1:1/", "--export", "remote-write=grpc://127.0.0.1:1"},
			[]string{`--export influx=http://127.0.0.1:1/: unknown kind "influx": want one of remote-write, otlp`, `scheme "grpc": want http or https`}},
		{[]string{"--export", "http://127.0.0.1:1/"}, []string{"want KIND=URL"}},
		{[]string{"--export-header", "Authorization: Bearer x"}, []string{"--export-header needs an --export"}},
		{[]string{"--export", "otlp=http://127.0.0.1:1/", "--export-header", "X-Token: ${PERFLAB_TEST_UNSET_VAR}", "--export-header", "nocolon"},
			[]string{"environment variable PERFLAB_TEST_UNSET_VAR is not set", `header "nocolon": want 'Name: value'`}},
	} {
		for _, cmd := range [][]string{{"http", url, "--duration", "1s"}, {"run", plan}} {
			args := append(append(cmd, "--out", out), c.args...)
			code, _, errs := mainOut(args...)
			if code != ExitUsage {
				t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitUsage, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("%v: no %q in\n%s", args, w, errs)
				}
			}
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections made to the target", n)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("%d run directories created", len(entries))
	}
}
