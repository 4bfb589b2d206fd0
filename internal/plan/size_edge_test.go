//go:build unix

package plan

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// paddedPlan is a valid plan whose params hold a list of n items.
func paddedPlan(n int) []byte {
	return []byte("name: x\nprofiles: [{name: a, duration: 1s, workloads: [{name: w, driver: d, rate: 1/s, params: {pad: [" +
		strings.TrimSuffix(strings.Repeat("x,", n), ",") + "]}}]}]\n")
}

// TestNodeLimitAtItsEdge: a plan of MaxNodes YAML nodes is read, one of
// MaxNodes+1 is refused, saying by how much.
func TestNodeLimitAtItsEdge(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal(paddedPlan(0), &root); err != nil {
		t.Fatal(err)
	}
	n := MaxNodes - int(written(root.Content[0])) // the document's mapping
	if _, err := ParsePartial("plan.yaml", paddedPlan(n), testEnv); err != nil {
		t.Errorf("a plan of %d nodes: %.300v", MaxNodes, err)
	}
	onlyProblem(t, paddedPlan(n+1), "plan.yaml: plan too large: 200,001 YAML nodes (1 workload in 1 profile), "+
		"1 over the limit of 200,000; split it into several plans")
}

// TestByteLimitAtItsEdge: a plan file of MaxBytes is read; one of
// MaxBytes+1 that is not a regular file (a pipe, whose size is known
// only once read) is refused, saying by how much.
func TestByteLimitAtItsEdge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	text := "name: x\n" + okProfiles + "# "
	if err := os.WriteFile(path, []byte(text+strings.Repeat("x", MaxBytes-len(text)-1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPartial(path); err != nil {
		t.Errorf("a plan of MaxBytes: %.300v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a pipe: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(make([]byte, MaxBytes+1))
	}()
	_, err := LoadPartial(fifo)
	want := fifo + ": plan too large: 16,777,217 bytes, 1 over the limit of 16,777,216 (16 MiB); split it into several plans"
	if err == nil || err.Error() != want {
		t.Errorf("got %.300v, want %s", err, want)
	}
}

func TestCountNegative(t *testing.T) {
	for n, want := range map[int64]string{-123: "-123", -1234: "-1,234", -123456: "-123,456", 0: "0", 999: "999"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %s, want %s", n, got, want)
		}
	}
}
