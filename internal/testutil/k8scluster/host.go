//go:build linux

package k8scluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// kubeletSysctls are the kernel settings the kubelet sets at start
// (pkg/kubelet/cm: setupKernelTunables): read before the cluster starts
// and written back when it stops.
var kubeletSysctls = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
}

// hostPaths are the places outside the cluster's own directory that the
// kubelet and containerd create whatever their configuration: each that
// did not exist before the cluster started is removed (from its first
// missing ancestor) when it stops.
var hostPaths = []string{
	"/var/lib/kubelet/device-plugins", // the device plugin socket dir is fixed
	"/var/lib/kubelet/pod-resources",
	"/var/lib/kubelet/plugins",
	"/var/lib/kubelet/plugins_registry",
	"/var/log/containers", // the kubelet's symlinks to container logs
	"/var/log/pods",
	"/run/containerd", // the shims' sockets (/run/containerd/s) are fixed
	"/var/lib/containerd",
	"/opt/containerd",
	"/var/lib/cni",
	"/run/netns",
	"/etc/cni",
	"/opt/cni",
	"/etc/kubernetes",
	"/usr/libexec/kubernetes", // the flex volume plugin dir, unless configured
	"/run/mount",              // libmount's utab, written by mount(8) for the kubelet
}

// cgroupName is the cgroup the kubelet puts pods in (cgroupRoot "/",
// cgroupfs driver), in every cgroup hierarchy.
const cgroupName = "kubepods"

// hostState is what the host looked like before the cluster started and
// where the cluster lives: enough to put the host back, by this process
// or, when it died before it could, by the next Start (it is saved as
// JSON next to the lock).
type hostState struct {
	Owner   int               `json:"owner"` // the test process
	Dir     string            `json:"dir"`   // the cluster's own directory
	Sysctls map[string]string `json:"sysctls"`
	Created []string          `json:"created"` // paths that did not exist
	Cgroups []string          `json:"cgroups"` // hierarchies without kubepods
}

// procSys is where sysctls are read and written; a variable for tests.
var procSys = "/proc/sys"

// snapshotHost reads the sysctls and notes which host paths and kubepods
// cgroups do not exist yet.
func snapshotHost(dir string) (*hostState, error) {
	s := &hostState{Owner: os.Getpid(), Dir: dir, Sysctls: map[string]string{}}
	for _, name := range kubeletSysctls {
		v, err := readSysctl(name)
		if err != nil {
			return nil, err
		}
		s.Sysctls[name] = v
	}
	seen := map[string]bool{}
	for _, p := range hostPaths {
		if m := firstMissing(p); m != "" && !seen[m] {
			seen[m] = true
			s.Created = append(s.Created, m)
		}
	}
	for _, h := range cgroupHierarchies() {
		if _, err := os.Lstat(filepath.Join(h, cgroupName)); errors.Is(err, os.ErrNotExist) {
			s.Cgroups = append(s.Cgroups, h)
		}
	}
	return s, nil
}

// firstMissing returns the shallowest of p and its ancestors that does
// not exist, or "" when p exists.
func firstMissing(p string) string {
	if _, err := os.Lstat(p); err == nil {
		return ""
	}
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		if _, err := os.Lstat(parent); err == nil {
			return p
		}
		p = parent
	}
}

func readSysctl(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(procSys, strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		return "", fmt.Errorf("cannot read sysctl %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func writeSysctl(name, value string) error {
	if err := os.WriteFile(filepath.Join(procSys, strings.ReplaceAll(name, ".", "/")), []byte(value+"\n"), 0o644); err != nil {
		return fmt.Errorf("cannot write sysctl %s: %w", name, err)
	}
	return nil
}

// restoreSysctls writes back each sysctl that differs from what it was.
func (s *hostState) restoreSysctls() error {
	var errs []error
	names := make([]string, 0, len(s.Sysctls))
	for name := range s.Sysctls {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		now, err := readSysctl(name)
		if err == nil && now == s.Sysctls[name] {
			continue
		}
		if err := writeSysctl(name, s.Sysctls[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCreated removes the host paths that did not exist before.
func (s *hostState) removeCreated() error {
	var errs []error
	for _, p := range s.Created {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("cannot remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Changes lists what still differs from the host before the cluster
// started: a sysctl not back to its value, a path or cgroup left behind.
func (s *hostState) changes() []string {
	var out []string
	for _, name := range kubeletSysctls {
		was, ok := s.Sysctls[name]
		if now, err := readSysctl(name); ok && err == nil && now != was {
			out = append(out, fmt.Sprintf("sysctl %s is %s, was %s", name, now, was))
		}
	}
	for _, p := range append(append([]string{}, s.Created...), s.Dir) {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p+" is left")
		}
	}
	for _, h := range s.Cgroups {
		if _, err := os.Lstat(filepath.Join(h, cgroupName)); err == nil {
			out = append(out, "cgroup "+filepath.Join(h, cgroupName)+" is left")
		}
	}
	for _, m := range mountsUnder(s.roots()) {
		out = append(out, "mount "+m+" is left")
	}
	return out
}

// roots are the directories whose mounts and processes are the
// cluster's: its own directory and the host paths it created.
func (s *hostState) roots() []string {
	return append([]string{s.Dir}, s.Created...)
}

// saveState writes s to path, to be found by the next Start should this
// process die before it restores the host.
func saveState(path string, s *hostState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode cluster state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("cannot write cluster state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot write cluster state: %w", err)
	}
	return nil
}

// loadState reads the state a cluster left; nil when there is none.
func loadState(path string) (*hostState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read cluster state: %w", err)
	}
	var s hostState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("cannot decode cluster state %s: %w", path, err)
	}
	if s.Dir == "" || !filepath.IsAbs(s.Dir) {
		return nil, fmt.Errorf("cannot use cluster state %s: no directory", path)
	}
	return &s, nil
}
