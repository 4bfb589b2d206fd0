//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echoServer answers every request 401 with the credentials it was sent:
// the http driver's requests in the status line's reason, which the driver
// keeps as its error sample; the openai driver's in an OpenAI error body.
func echoServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := "bad token " + r.Header.Get("Authorization") + " key " + r.Header.Get("X-Api-Key")
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error": {"message": %q}}`, echo)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 401 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", echo)
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// secretsPlan sends credentials, from the environment and written
// literally, to echoServer (%[1]s); its component prints its own.
const secretsPlan = `name: secrets
components:
  - name: printer
    run:
      command: sh
      args: ["-c", "echo token=$API_TOKEN key=$ROOT_SECRET_KEY; exec sleep 600"]
      env: {API_TOKEN: "${E2E_TOKEN}", ROOT_SECRET_KEY: literal-component-secret}
profiles:
  - name: p
    duration: 2s
    workloads:
      - name: get
        driver: http
        rate: 20/s
        params:
          url: "%[1]s/x"
          headers: {Authorization: "Bearer ${E2E_TOKEN}", X-Api-Key: literal-header-secret}
      - name: chat
        driver: openai
        rate: 20/s
        params: {url: "%[1]s", model: m, prompts: [hi], api_key: literal-api-key-secret}
`

// TestSecretsNeverStoredOrPrinted: credentials a server echoes in its
// errors, and those a component prints, appear in no file of the run
// directory (results.db's bytes included) and nowhere on the terminal,
// whether written literally or read from the environment.
func TestSecretsNeverStoredOrPrinted(t *testing.T) {
	t.Parallel()
	const token = "env-token-0123456789"
	env := []string{"E2E_TOKEN=" + token}
	url := echoServer(t)
	out := t.TempDir()
	r := runEnv(t, env, "run", writePlan(t, fmt.Sprintf(secretsPlan, url)), "--out", out)
	if r.code != 1 || !strings.Contains(r.stderr, "4xx") {
		t.Fatalf("exit %d, want 1 (every request refused)\n%s", r.code, r.stderr)
	}
	secrets := []string{token, "literal-header-secret", "literal-api-key-secret", "literal-component-secret"}
	checkNoSecrets(t, out, r, secrets)
	log, err := os.ReadFile(filepath.Join(runDir(t, r.stderr), "logs", "cell-0", "printer.stdout.log"))
	if err != nil || !strings.Contains(string(log), "token=${E2E_TOKEN} key=[redacted]") {
		t.Errorf("the component's log: %v\n%s", err, log)
	}
	// What was scrubbed is still there, as its reference or masked.
	for _, want := range []string{"Bearer ${E2E_TOKEN}", "bad token Bearer [redacted]"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("no %q in the output:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}

	// perflab http, a literal credential in a header and one from the
	// environment.
	out = t.TempDir()
	r = runEnv(t, env, "http", url+"/y", "-H", "Authorization: Bearer literal-flag-secret", "-H", "X-Api-Key: ${E2E_TOKEN}",
		"--rate", "20/s", "--duration", "1s", "--out", out)
	if r.code != 1 {
		t.Fatalf("perflab http: exit %d, want 1\n%s", r.code, r.stderr)
	}
	checkNoSecrets(t, out, r, []string{"literal-flag-secret", token})
	if !strings.Contains(r.stdout+r.stderr, "bad token Bearer [redacted] key ${E2E_TOKEN}") {
		t.Errorf("perflab http: the error is not shown, scrubbed:\n%s\n%s", r.stdout, r.stderr)
	}
}

// checkNoSecrets fails when a secret is in any file under dir or in r's
// output.
func checkNoSecrets(t *testing.T, dir string, r result, secrets []string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil || files < 4 {
		t.Fatalf("%d files in %s: %v", files, dir, err)
	}
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the terminal shows %q:\n%s\n%s", s, r.stdout, r.stderr)
		}
	}
}
