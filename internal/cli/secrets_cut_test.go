package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutSecretsNeverLeak (issue 16, item 7): a server that echoes the
// request's Authorization header into a 401 at the place where an error
// sample is cut. Before, samples were shortened to 200 characters before
// they were scrubbed, so the cut-off start of the token was not
// recognised and reached summary.json, report.md, report.html, results.db
// and the terminal. Now no fragment of 6 characters or more of the token
// is anywhere.
func TestCutSecretsNeverLeak(t *testing.T) {
	const key = "sk-PROJ-0123456789-abcdefghij-KLMNOPQRST"
	t.Setenv("PERFLAB_TEST_KEY", key)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		// "HTTP 401 Unauthorized: " and this message put the key across
		// the 200th byte of the sample.
		msg := strings.Repeat("x", 120) + " Incorrect API key provided: " + r.Header.Get("Authorization")
		w.Write([]byte(`{"error": {"message": "` + msg + `"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	err := os.WriteFile(planPath, []byte(`name: cut
profiles:
  - name: p
    duration: 1s
    workloads:
      - name: chat
        driver: openai
        rate: 20/s
        params: {url: "`+srv.URL+`", model: m, api_key: "${PERFLAB_TEST_KEY}", prompts: ["hi"]}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := mainOut("run", planPath, "--out", out)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d (every request failed):\n%s", code, ExitFailed, stderr)
	}
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	for _, name := range []string{"summary.json", "report.md", "report.html", "results.db"} {
		b, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
	}
	if !strings.Contains(texts["summary.json"], "Incorrect API key") {
		t.Errorf("summary.json has no sample of the 401:\n%s", texts["summary.json"])
	}
	for name, text := range texts {
		for i := 0; i+6 <= len(key); i++ {
			if frag := key[i : i+6]; strings.Contains(text, frag) {
				t.Errorf("%s holds %q of the key", name, frag)
				break
			}
		}
	}
}
