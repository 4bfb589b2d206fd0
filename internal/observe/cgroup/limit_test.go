package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPULimit(t *testing.T) {
	proc, root := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "7", "cgroup"), "0::/kubepods/pod1/ctr\n")
	write(filepath.Join(proc, "8", "cgroup"), "0::/user.slice\n")
	write(filepath.Join(proc, "9", "cgroup"), "0::/bad\n")
	write(filepath.Join(root, "kubepods", "cpu.max"), "max 100000\n")
	write(filepath.Join(root, "kubepods", "pod1", "cpu.max"), "300000 100000\n")
	write(filepath.Join(root, "kubepods", "pod1", "ctr", "cpu.max"), "150000 100000\n")
	write(filepath.Join(root, "user.slice", "cpu.max"), "max 100000\n")
	write(filepath.Join(root, "bad", "cpu.max"), "lots\n")
	for _, c := range []struct {
		pid     int
		cores   float64
		limited bool
		fail    bool
	}{{7, 1.5, true, false}, {8, 0, false, false}, {9, 0, false, true}, {10, 0, false, true}} {
		cores, limited, err := CPULimit(proc, root, c.pid)
		if cores != c.cores || limited != c.limited || (err != nil) != c.fail {
			t.Errorf("pid %d: %v, %v, %v; want %v, %v, failure %v", c.pid, cores, limited, err, c.cores, c.limited, c.fail)
		}
	}
}
