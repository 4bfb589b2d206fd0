package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemClassesWritesThePeak(t *testing.T) {
	var c memClasses
	c.read()
	held := c.held
	if held == 0 {
		t.Fatal("no memory held by the runtime after a read")
	}
	c.held = held * 1000 // a higher peak than anything to come
	c.read()
	if c.held != held*1000 {
		t.Fatalf("a lower reading replaced the peak: %d", c.held)
	}
	path := filepath.Join(t.TempDir(), "heap.pprof.metrics")
	if err := c.write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/memory/classes/total:bytes", "/memory/classes/heap/stacks:bytes", "/gc/heap/goal:bytes"} {
		if !strings.Contains(string(b), name+" ") {
			t.Errorf("%s missing from:\n%s", name, b)
		}
	}
}

func TestProfileWritesTheTraceAndCPUProfileAsked(t *testing.T) {
	dir := t.TempDir()
	trace, cpu := filepath.Join(dir, "trace.out"), filepath.Join(dir, "cpu.pprof")
	t.Setenv(traceEnv, trace)
	t.Setenv(profileEnv, cpu)
	var stderr bytes.Buffer
	stop := startProfile(&stderr)
	stop()
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	for path, magic := range map[string]string{trace: "go 1.", cpu: "\x1f\x8b"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), magic) {
			t.Errorf("%s starts %q, want %q", filepath.Base(path), b[:min(len(b), 8)], magic)
		}
	}
}

func TestProfileToAnUnwritablePathIsReported(t *testing.T) {
	t.Setenv(traceEnv, filepath.Join(t.TempDir(), "missing", "trace.out"))
	var stderr bytes.Buffer
	startProfile(&stderr)()
	if !strings.Contains(stderr.String(), "cannot profile to") {
		t.Errorf("stderr %q does not say the trace could not be written", stderr.String())
	}
}

func TestPeakRSSIsWrittenAtTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rss")
	t.Setenv(peakRSSEnv, path)
	var stderr bytes.Buffer
	startProfile(&stderr)()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"VmHWM:", "RssAnon:", "RssFile:"} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s missing from:\n%s", key, b)
		}
	}
	if strings.Contains(string(b), "Name:") || stderr.Len() > 0 {
		t.Errorf("wrote more than the memory lines, or complained: %q, stderr %q", b, stderr.String())
	}
}
