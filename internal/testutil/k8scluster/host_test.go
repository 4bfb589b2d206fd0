//go:build linux

package k8scluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		filepath.Join(dir, "a"):         "",
		filepath.Join(dir, "a/b/c"):     filepath.Join(dir, "a/b"),
		filepath.Join(dir, "x/y/z"):     filepath.Join(dir, "x"),
		filepath.Join(dir, "a/missing"): filepath.Join(dir, "a/missing"),
	} {
		if got := firstMissing(p); got != want {
			t.Errorf("firstMissing(%s) = %q, want %q", p, got, want)
		}
	}
}

// TestRestoreSysctlsWritesBackWhatChanged uses a fake /proc/sys.
func TestRestoreSysctlsWritesBackWhatChanged(t *testing.T) {
	old := procSys
	procSys = t.TempDir()
	t.Cleanup(func() { procSys = old })
	for _, name := range kubeletSysctls {
		p := filepath.Join(procSys, strings.ReplaceAll(name, ".", "/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := snapshotHost(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// what the kubelet does
	for name, v := range map[string]string{"vm.overcommit_memory": "1", "kernel.panic": "10", "kernel.panic_on_oops": "1"} {
		if err := writeSysctl(name, v); err != nil {
			t.Fatal(err)
		}
	}
	var changed []string
	for _, c := range s.changes() {
		if strings.HasPrefix(c, "sysctl ") {
			changed = append(changed, c)
		}
	}
	if len(changed) != 3 {
		t.Errorf("changes before restore = %v, want the 3 sysctls", changed)
	}
	if err := s.restoreSysctls(); err != nil {
		t.Fatal(err)
	}
	for _, name := range kubeletSysctls {
		if v, _ := readSysctl(name); v != "0" {
			t.Errorf("%s = %s after restore, want 0", name, v)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.json")
	if s, err := loadState(path); s != nil || err != nil {
		t.Fatalf("loadState of nothing = %v, %v", s, err)
	}
	want := &hostState{Owner: 42, Dir: "/tmp/perflab-k8s-1", Sysctls: map[string]string{"kernel.panic": "1"},
		Created: []string{"/run/containerd"}, Cgroups: []string{"/sys/fs/cgroup/memory"}}
	if err := saveState(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(path)
	if err != nil || got.Owner != 42 || got.Dir != want.Dir || got.Sysctls["kernel.panic"] != "1" ||
		got.Created[0] != "/run/containerd" || got.Cgroups[0] != "/sys/fs/cgroup/memory" {
		t.Errorf("loadState = %+v, %v; want %+v", got, err, want)
	}
	if err := os.WriteFile(path, []byte(`{"dir": ""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadState(path); err == nil {
		t.Error("a state without a directory was accepted")
	}
}

func TestUnderAny(t *testing.T) {
	roots := []string{"/tmp/perflab-k8s-1", "/run/containerd"}
	for s, want := range map[string]bool{
		"--config=/tmp/perflab-k8s-1/kubelet/config.yaml": true,
		"/tmp/perflab-k8s-1":                              true,
		"/tmp/perflab-k8s-12/x":                           false,
		"/run/containerd/s/abc":                           true,
		"/run/containerd2":                                false,
		"kubelet":                                         false,
	} {
		if got := underAny(s, roots); got != want {
			t.Errorf("underAny(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/tmp/a\040b`); got != "/tmp/a b" {
		t.Errorf("unescapeMount = %q", got)
	}
	if got := unescapeMount(`/plain`); got != "/plain" {
		t.Errorf("unescapeMount = %q", got)
	}
}
