//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// chromium runs headless Chromium on url with args and returns its stdout
// and stderr.
func chromium(t *testing.T, bin, url string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleErrors are the lines of Chromium's log that report a page's
// console messages (Chromium logs console.error as INFO:CONSOLE; the report
// runs no script, so any message at all is an error of the page) or a
// resource it could not load.
var consoleErrors = regexp.MustCompile(`(?m)^.*(:CONSOLE[:(\]]|Uncaught|Failed to load resource|net::ERR_).*$`)

// TestHTMLReportInABrowser opens the report.html of a real plan run in
// headless Chromium: no console errors, nothing fetched, no address in the
// DOM but the run's own, every chart in the DOM as an <svg> with its
// title, and the sections of a sizing run (suggested sizes with their
// YAML, here empty with a warning: 3 s profiles hold too few samples to
// size from; scaling); and it renders to a screenshot (in the test's temporary
// directory, never the repository).
func TestHTMLReportInABrowser(t *testing.T) {
	t.Parallel()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		testutil.Unavailable(t, "chromium is not installed (scripts/install-deps.sh installs it)")
		return
	}
	// The harness must see a console error when there is one.
	probe := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probe, []byte(`<!DOCTYPE html><script>console.error("probe-error")</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, log := chromium(t, bin, "file://"+probe, "--dump-dom"); !consoleErrors.MatchString(log) || !strings.Contains(log, "probe-error") {
		t.Fatalf("a console error does not show in Chromium's log:\n%s", log)
	}

	dir := runHTMLPlan(t)
	page := "file://" + filepath.Join(dir, "report.html")
	dom, log := chromium(t, bin, page, "--dump-dom")
	if m := consoleErrors.FindAllString(log, -1); len(m) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(m, "\n"))
	}
	for _, profile := range []string{"low", "high"} {
		for _, kind := range []string{"Throughput", "Latency p50, p90, p99 per interval", "Errors and dropped arrivals",
			"CPU by component", "Memory by component", "Latency spectrum over the steady-state window"} {
			title := kind + " — profile " + profile
			if !strings.Contains(dom, `<svg role="img" aria-label="`+title+`"`) || !strings.Contains(dom, "<title>"+title+"</title>") {
				t.Errorf("the DOM has no <svg> titled %q", title)
			}
		}
	}
	if n := strings.Count(dom, "<svg"); n != 12 {
		t.Errorf("%d <svg> elements, want 12", n)
	}
	wants := []string{`<h2 id="cell0-sizes">Suggested sizes</h2>`, "<h3>Size <code>high</code>",
		"<pre><code class=\"language-yaml\">web:\n", `<li class="warning">Warning: component web has `, "<h2>Resource consumption summary</h2>"}
	if strings.Contains(dom, "(machine-busy") { // the fits leave out what a busy machine measured
		t.Logf("the machine was busy with other work; the report need not fit the profiles")
	} else {
		wants = append(wants, "<h2>Scaling</h2>")
	}
	for _, want := range wants {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	// The run's own addresses are its target and the target's /metrics.
	rest := regexp.MustCompile(`http://127\.0\.0\.1:\d+/(metrics)?`).ReplaceAllString(dom, "")
	for _, bad := range []string{"://", "url(", "@import", "@font-face"} {
		if i := strings.Index(rest, bad); i >= 0 {
			t.Errorf("the DOM has %q: …%s…", bad, rest[max(0, i-80):min(len(rest), i+80)])
		}
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	chromium(t, bin, page, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Errorf("screenshot: %v", err)
	}
}

// runHTMLPlan runs a plan of two 3 s profiles against the built-in
// target, sampled, and returns its run directory.
func runHTMLPlan(t *testing.T) string {
	t.Helper()
	port := testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: html
components:
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 2ms]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: http://127.0.0.1:%[1]d/metrics
profiles:
  - name: low
    duration: 3s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
  - name: high
    duration: 3s
    workloads:
      - {name: get, driver: http, rate: 200/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port))
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	for _, f := range []string{"report.html", "charts/cell0-phase0-throughput.svg", "charts/cell0-phase1-spectrum.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "(charts/cell0-phase0-cpu.svg)") {
		t.Errorf("report.md does not link the charts:\n%s", md)
	}
	again := run(t, "report", dir, "--format", "html")
	if again.code != 0 || strings.Count(again.stdout, "<svg") != 12 {
		t.Errorf("perflab report --format html: exit %d, %d charts", again.code, strings.Count(again.stdout, "<svg"))
	}
	return dir
}
