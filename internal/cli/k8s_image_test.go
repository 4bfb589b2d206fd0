package cli

import (
	"bytes"
	"debug/elf"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dynamicExe is an executable of the system that needs the dynamic
// loader (a PT_INTERP), or the test is skipped.
func dynamicExe(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/bin/sh", "/usr/bin/env", "/bin/true"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				return p
			}
		}
	}
	t.Skip("no dynamically linked executable found on this system")
	return ""
}

// TestK8sImageRefusesADynamicBinary: a perflab built with cgo cannot be
// the image's binary: exit 1, saying to build it with CGO_ENABLED=0, and
// no archive.
func TestK8sImageRefusesADynamicBinary(t *testing.T) {
	var stderr bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &stderr, exe: dynamicExe(t)}
	out := filepath.Join(t.TempDir(), "perflab.tar")
	code := e.main(t.Context(), []string{"k8s", "image", "--out", out})
	if code != ExitFailed || !strings.Contains(stderr.String(), "dynamic loader") || !strings.Contains(stderr.String(), "CGO_ENABLED=0") {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); len(matches) != 0 {
		t.Errorf("left behind: %v", matches)
	}
}

// TestK8sImageUsage: what `perflab k8s image` refuses before building
// anything (exit 2).
func TestK8sImageUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "needs --out FILE"},
		{[]string{"--out", "x.tar", "extra"}, "takes no arguments"},
		{[]string{"--out", "x.tar", "--tag", "Bad:Name"}, "--tag"},
		{[]string{"--push", "perflab@sha256:" + strings.Repeat("0", 64)}, "not a digest"},
		{[]string{"--push", "registry.example:5000/perflab", "--insecure"}, "loopback only"},
		{[]string{"--out", "x.tar", "--insecure"}, "--insecure is for --push"},
	} {
		var stderr bytes.Buffer
		e := &env{stdout: io.Discard, stderr: &stderr, exe: "/nonexistent"}
		code := e.main(t.Context(), append([]string{"k8s", "image"}, c.args...))
		if code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s", c.args, code, ExitUsage, c.want, stderr.String())
		}
	}
}

// TestK8sMissingImageSaysHowToMakeOne: perflab k8s run and manifest
// without --image say how to get perflab's image into a cluster.
func TestK8sMissingImageSaysHowToMakeOne(t *testing.T) {
	plan := httpPlan(t, "http://127.0.0.1:1/", 10, time.Second)
	for _, cmd := range []string{"run", "manifest"} {
		var stderr bytes.Buffer
		e := &env{stdout: io.Discard, stderr: &stderr}
		code := e.main(t.Context(), []string{"k8s", cmd, plan, "--workers", "2", "--store", t.TempDir()})
		for _, want := range []string{"an image is needed", "perflab k8s image --out perflab.tar", "kind load image-archive perflab.tar",
			"k3d image import perflab.tar", "ctr -n k8s.io images import perflab.tar", "--image perflab:" + Version,
			"perflab k8s image --push REGISTRY/perflab"} {
			if code != ExitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("k8s %s: exit %d, stderr lacks %q:\n%s", cmd, code, want, stderr.String())
			}
		}
	}
}
