package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestFlagErrorsAreOneLine: a bad flag is one line on stderr, naming the
// flag meant and where the rest is, not the whole usage; a duration
// without a unit gets a valid example; nothing is printed on stdout.
func TestFlagErrorsAreOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"http", "http://127.0.0.1:1/", "--rat", "5/s"}, []string{"unknown flag --rat; did you mean --rate?", "see perflab http --help"}},
		{[]string{"run", "plan.yaml", "--repeet", "2"}, []string{"did you mean --repeat?", "see perflab run --help"}},
		{[]string{"k8s", "run", "plan.yaml", "--wrokers", "2"}, []string{"did you mean --workers?", "see perflab k8s run --help"}},
		{[]string{"http", "http://127.0.0.1:1/", "--duration", "10"}, []string{`--duration "10": want a duration like 10s or 1m30s`}},
		{[]string{"search", "plan.yaml", "--step-duration", "20"}, []string{`--step-duration "20": want a duration like 10s or 1m30s`}},
		{[]string{"http", "http://127.0.0.1:1/", "-c", "many"}, []string{`-c "many": want a whole number`}},
		{[]string{"http", "http://127.0.0.1:1/", "--xyzzy"}, []string{"unknown flag --xyzzy (see perflab http --help)"}},
	} {
		code, stdout, stderr := mainOut(c.args...)
		if code != ExitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, %d lines on stderr, stdout %q:\n%s", c.args, code, strings.Count(stderr, "\n"), stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: no %q in\n%s", c.args, w, stderr)
			}
		}
	}
}

// TestHelpOnStdout: every command's --help (and perflab help COMMAND)
// prints its usage on stdout and exits 0, commands with subcommands too.
func TestHelpOnStdout(t *testing.T) {
	for _, c := range [][]string{
		{"run"}, {"http"}, {"search"}, {"demo"}, {"report"}, {"size"}, {"compare"}, {"merge"}, {"worker"},
		{"plan"}, {"plan", "check"}, {"k8s"}, {"k8s", "run"}, {"k8s", "manifest"}, {"k8s", "image"},
		{"target"}, {"target", "http"}, {"target", "llm"}, {"target", "gateway"}, {"version"}, {"completion"},
	} {
		for _, args := range [][]string{append(append([]string{}, c...), "--help"), append([]string{"help"}, c...), append(append([]string{}, c...), "-h")} {
			code, stdout, stderr := mainOut(args...)
			if code != ExitOK || !strings.Contains(stdout, "Usage") || stderr != "" {
				t.Errorf("%q: exit %d, stderr %q, stdout:\n%.300s", args, code, stderr, stdout)
			}
		}
	}
	code, stdout, _ := mainOut("--help")
	if code != ExitOK || !strings.Contains(stdout, "four load levels") || !strings.Contains(stdout, "perflab demo") {
		t.Errorf("perflab --help does not say what the demo does: exit %d\n%s", code, stdout)
	}
}

// TestVersionText: the commit, its date, whether the tree was modified
// and the Go version, as the toolchain stamped them; "unknown" when it
// stamped none.
func TestVersionText(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-29T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionText(info)
	for _, want := range []string{"perflab " + Version, "commit:      0123abcd (modified)", "commit date: 2026-11-29T10:00:00Z", "go:          go1.99.1 "} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "module:") {
		t.Errorf("a (devel) build names a module version:\n%s", got)
	}
	got = versionText(&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "v0.2.0"}})
	if !strings.Contains(got, "module:      v0.2.0") || !strings.Contains(got, "commit:      unknown\n") {
		t.Errorf("go install …@v0.2.0:\n%s", got)
	}
	if code, stdout, _ := mainOut("version"); code != ExitOK || !strings.Contains(stdout, "go:          go1.") {
		t.Errorf("perflab version: exit %d\n%s", code, stdout)
	}
}

// TestCompletionKnowsEveryCommand: every command and subcommand perflab's
// usage shows is one the completion scripts offer (and __flags answers).
func TestCompletionKnowsEveryCommand(t *testing.T) {
	shown := regexp.MustCompile(`(?m)^  perflab ([a-z0-9]+)(?: ([a-z][a-z0-9]+)\b)?`)
	matches := shown.FindAllStringSubmatch(usage, -1)
	if len(matches) < 10 {
		t.Fatalf("%d commands in the usage", len(matches))
	}
	for _, m := range matches {
		i := slices.IndexFunc(commands, func(c struct {
			name string
			subs []string
		}) bool {
			return c.name == m[1]
		})
		if i < 0 {
			t.Errorf("perflab %s is in the usage but not in commands: completion never offers it", m[1])
			continue
		}
		if len(commands[i].subs) > 0 && !slices.Contains(commands[i].subs, m[2]) {
			t.Errorf("perflab %s %s is in the usage but not among %s's subcommands %v", m[1], m[2], m[1], commands[i].subs)
		}
	}
}

// TestCompletion: perflab __flags lists a command's flags as its --help
// does; the bash script completes commands, subcommands and flags (asked
// of perflab, here a stub answering as __flags does); zsh and fish get
// theirs; another shell is refused.
func TestCompletion(t *testing.T) {
	_, flags, _ := mainOut("__flags", "http")
	for _, want := range []string{"--rate\n", "--junit\n", "--quiet\n", "-c\n", "--duration\n"} {
		if !strings.Contains(flags, want) {
			t.Errorf("__flags http lacks %q:\n%s", want, flags)
		}
	}
	if _, flags, _ := mainOut("__flags", "k8s", "run"); !strings.Contains(flags, "--kubeconfig\n") {
		t.Errorf("__flags k8s run:\n%s", flags)
	}
	if _, flags, _ := mainOut("__flags", "run", "plan.yaml"); !strings.Contains(flags, "--repeat\n") {
		t.Errorf("__flags run plan.yaml:\n%s", flags)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	_, script, _ := mainOut("completion", "bash")
	path := filepath.Join(t.TempDir(), "perflab.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		prog := fmt.Sprintf(`perflab() { [[ "$1 $2" == "__flags http" ]] && printf '%%s\n' %s; }
source %q
COMP_WORDS=(%s); COMP_CWORD=%d; _perflab; echo "${COMPREPLY[*]}"`, strings.TrimSpace(strings.ReplaceAll(flags, "\n", " ")), path,
			strings.Join(quoted(words), " "), len(words)-1)
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("perflab", "se"); got != "search" {
		t.Errorf("perflab se<TAB>: %q", got)
	}
	if got := complete("perflab", "k8s", "ma"); got != "manifest" {
		t.Errorf("perflab k8s ma<TAB>: %q", got)
	}
	if got := complete("perflab", "http", "URL", "--ra"); got != "--rate" {
		t.Errorf("perflab http URL --ra<TAB>: %q", got)
	}
	for shell, want := range map[string]string{"zsh": "bashcompinit", "fish": "complete -c perflab"} {
		if code, out, _ := mainOut("completion", shell); code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "search") {
			t.Errorf("%s: exit %d\n%s", shell, code, out)
		}
	}
	if code, _, stderr := mainOut("completion", "powershell"); code != ExitUsage || !strings.Contains(stderr, "want bash, zsh or fish") {
		t.Errorf("powershell: exit %d\n%s", code, stderr)
	}
}

func quoted(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = fmt.Sprintf("%q", w)
	}
	return out
}

// TestQuiet: --quiet (before the command or among its flags) leaves
// stderr without the progress, the notes and the lines saying where the
// files are; the report is still on stdout.
func TestQuiet(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	out := t.TempDir()
	for _, args := range [][]string{
		{"--quiet", "http", srv.URL + "/", "--rate", "20/s", "--duration", "1s", "--out", out},
		{"http", srv.URL + "/", "--rate", "20/s", "--duration", "1s", "--out", out, "--quiet"},
	} {
		code, stdout, stderr := mainOut(args...)
		if code != ExitOK || !strings.Contains(stdout, "GET /") {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		for _, chatter := range []string{"run directory:", "writing run to", "ETA", "report:"} {
			if strings.Contains(stderr, chatter) {
				t.Errorf("%q: stderr has %q:\n%s", args, chatter, stderr)
			}
		}
	}
}

// TestNoEscapes: TERM=dumb or any NO_COLOR turns the escape codes off.
func TestNoEscapes(t *testing.T) {
	for env, want := range map[string]bool{"": false, "TERM=xterm": false, "TERM=dumb": true, "NO_COLOR=1": true, "TERM=xterm NO_COLOR=x": true} {
		vars := map[string]string{}
		for _, kv := range strings.Fields(env) {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		if got := noEscapes(func(k string) string { return vars[k] }); got != want {
			t.Errorf("%q: %v, want %v", env, got, want)
		}
	}
}

// TestRateWithoutUnit: a rate without a unit is refused the same way in
// a plan and on the command line, naming the rate meant.
func TestRateWithoutUnit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	plan := "name: r\nprofiles:\n  - name: a\n    duration: 2s\n    workloads:\n      - {name: get, driver: http, rate: 100, params: {url: \"http://127.0.0.1:1/\"}}\n"
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, fromPlan := mainOut("plan", "check", path)
	_, _, fromFlag := mainOut("http", "http://127.0.0.1:1/", "--rate", "100")
	if !strings.Contains(fromPlan, `rate "100" needs a unit: 100/s`) || !strings.Contains(fromFlag, `--rate "100" needs a unit: 100/s`) {
		t.Errorf("plan:\n%s\nflag:\n%s", fromPlan, fromFlag)
	}
}
