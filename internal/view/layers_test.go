package view

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayers keeps the arrows down (STYLE.md 12): the model imports no
// renderer, run decides a run's end without one, readback reads a run as
// it recorded itself (no driver registry), and a driver knows nothing of
// the model.
func TestLayers(t *testing.T) {
	const mod = "github.com/perflab/perflab/internal/"
	for pkg, not := range map[string][]string{
		"view":     {"report", "readback", "run", "results"},
		"run":      {"report"},
		"readback": {"report", "driver/registry"},
		"driver":   {"view", "analysis", "results"},
	} {
		deps := goListDeps(t, mod+pkg)
		for _, n := range not {
			if slices.Contains(deps, mod+n) {
				t.Errorf("%s imports %s", pkg, n)
			}
		}
	}
}

// goListDeps is every package pkg imports, directly or not.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list imports with")
	}
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
