package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblemsPlacedAtTheirOwnKey: a driver's problem is placed at the
// key it carries, even when its message names another present key first
// (a file path named like a key, a conflict phrased around another key)
// or names none at all.
func TestProblemsPlacedAtTheirOwnKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.jsonl"), []byte("{\"prompt\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		driver, params, want string
	}{
		{"openai", `          url: "http://127.0.0.1:1"
          model: m
          prompts_file: model.jsonl
`, `p.yaml:12:25: params: ` + filepath.Join(dir, "model.jsonl") + `:1: cannot parse prompt`},
		{"s3", `          endpoint: "http://127.0.0.1:1"
          bucket: bkt
          objects: 10
          ops: {get: 1, delete: 1}
          put_overwrite: true
`, `p.yaml:14:26: params: delete removes objects PUT under new names`},
		{"s3", `          endpoint: "http://127.0.0.1:1"
          bucket: bkt
          ops: {put: 1}
          sizes: {1x: 1, 2GiB: 1}
`, `p.yaml:13:18: params: cannot parse size "1x"`},
		{"s3", `          endpoint: "http://127.0.0.1:1"
          bucket: bkt
          ops: {put: 1}
          sizes: {1x: 1, 2GiB: 1}
`, `p.yaml:13:18: params: object size 2GiB is above`},
	} {
		_, errs := Decode(c.driver, Input{Params: params(t, c.params), File: "p.yaml", Dir: dir})
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		if all := strings.Join(got, "\n"); !strings.Contains(all, c.want) {
			t.Errorf("%s: no %q in\n%s", c.driver, c.want, all)
		}
	}
}
