package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestBuildsOffLinux: perflab runs on Linux only, but every package builds
// and vets for other systems (the calls only Linux has sit in files that
// say //go:build linux, with stand-ins beside them), so that the binary
// can start there and say so (internal/cli). It compiles only; with the
// build cache warm it takes seconds.
func TestBuildsOffLinux(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the module: not in -short")
	}
	goTool, err := exec.LookPath("go") // go test puts its own GOROOT/bin first in PATH
	if err != nil {
		t.Skipf("cannot cross-compile: no go command (%v)", err)
	}
	out, err := exec.Command(goTool, "tool", "dist", "list").Output()
	if err != nil {
		t.Skipf("cannot cross-compile: go tool dist list: %v", err)
	}
	targets := strings.Fields(string(out))
	for _, goos := range []string{"darwin", "windows"} {
		target := goos + "/" + runtime.GOARCH
		if !slices.Contains(targets, target) {
			t.Logf("skipped %s: this toolchain does not build for it", target)
			continue
		}
		for _, verb := range []string{"build", "vet"} {
			cmd := exec.Command(goTool, verb, "./...")
			cmd.Dir = filepath.Join("..", "..")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s go %s ./...: %v\n%s", goos, verb, err, out)
			}
		}
	}
}
