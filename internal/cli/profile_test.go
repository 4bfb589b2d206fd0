package cli

import (
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
