package testutil

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// LiteLLMVenvEnv names the virtualenv scripts/install-deps.sh installs
// LiteLLM's proxy into, when not the default
// ${XDG_CACHE_HOME:-~/.cache}/perflab/litellm.
const LiteLLMVenvEnv = "PERFLAB_LITELLM_VENV"

// LiteLLMProxy is LiteLLM's proxy, an LLM gateway written in Python,
// configured in front of one OpenAI-compatible upstream, without starting
// it: a plan runs it as a component (Bin with Args and Env), so perflab
// observes its CPU and memory. It serves Model, forwarded to the upstream
// under the same name, on 127.0.0.1:Port, and accepts only requests that
// carry "Authorization: Bearer <the master key>": Key, which perflab
// reads from the environment variable KeyEnv (a plan passes it as
// ${KeyEnv}; the caller sets KeyEnv=Key in perflab's environment).
type LiteLLMProxy struct {
	Bin    string
	Dir    string // config.yaml
	Port   int
	Model  string
	Args   []string
	Env    map[string]string // besides the master key
	KeyEnv string
	Key    string
}

// NewLiteLLMProxy writes the configuration of a LiteLLM proxy to upstream
// ("http://127.0.0.1:PORT", whose API is under /v1) on a free port, with a
// random master key. It skips the test (see Unavailable) when LiteLLM is
// not installed. It leaves the test's environment alone, so that the test
// may run in parallel.
func NewLiteLLMProxy(t *testing.T, upstream, model string) LiteLLMProxy {
	t.Helper()
	skipShort(t, "litellm")
	bin := liteLLMBinary(t)
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		t.Fatalf("upstream %q: want http://HOST:PORT", upstream)
	}
	p := LiteLLMProxy{Bin: bin, Dir: t.TempDir(), Port: FreePort(t), Model: model, KeyEnv: "PERFLAB_TEST_LITELLM_KEY"}
	// The upstream needs no key; LiteLLM's openai provider wants one set.
	conf := fmt.Sprintf(`model_list:
  - model_name: %[1]s
    litellm_params:
      model: openai/%[1]s
      api_base: %[2]s/v1
      api_key: upstream-needs-no-key
litellm_settings:
  telemetry: false
`, model, upstream)
	path := filepath.Join(p.Dir, "config.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatalf("cannot write the LiteLLM config: %v", err)
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	p.Key = "sk-" + hex.EncodeToString(key)
	p.Args = []string{"--config", path, "--host", "127.0.0.1", "--port", strconv.Itoa(p.Port), "--num_workers", "1"}
	p.Env = map[string]string{
		"LITELLM_MASTER_KEY":           "${" + p.KeyEnv + "}",
		"LITELLM_LOCAL_MODEL_COST_MAP": "True", // no download of the model price list at start
		"LITELLM_LOG":                  "ERROR",
		"NO_DOCS":                      "True",
	}
	return p
}

// liteLLMBinary finds LiteLLM's proxy: in PATH, then in the virtualenv
// scripts/install-deps.sh installs it into.
func liteLLMBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("litellm"); err == nil {
		return p
	}
	venv := os.Getenv(LiteLLMVenvEnv)
	if venv == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			Unavailable(t, "LiteLLM is not in PATH and there is no cache directory to look in: %v", err)
			return ""
		}
		venv = filepath.Join(cache, "perflab", "litellm")
	}
	p := filepath.Join(venv, "bin", "litellm")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		Unavailable(t, "LiteLLM's proxy is not installed (scripts/install-deps.sh puts it in %s; or pip install 'litellm[proxy]')", venv)
		return ""
	}
	return p
}
