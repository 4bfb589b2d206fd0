//go:build k8s && linux

package k8scluster_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostView is what the test sees of the host, read without the helper's
// code, so that the helper's restore is checked by something else.
type hostView struct {
	sysctls  map[string]string
	paths    map[string]bool // exists?
	iptables string
	leftover []string // the cluster's own mounts, processes, directory
}

var (
	watchedSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
		"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}
	watchedPaths = []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/run/containerd",
		"/var/lib/containerd", "/opt/containerd", "/var/lib/cni", "/run/netns", "/etc/cni", "/opt/cni", "/etc/kubernetes",
		"/usr/libexec/kubernetes", "/run/mount"}
)

// readHost reads the sysctls the kubelet sets, which of the watched paths
// and kubepods cgroups exist and the iptables rules; with the cluster's
// directory, also what is left of the cluster under it.
func readHost(t *testing.T, clusterDir string) hostView {
	t.Helper()
	v := hostView{sysctls: map[string]string{}, paths: map[string]bool{}}
	for _, s := range watchedSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err != nil {
			t.Fatalf("cannot read sysctl %s: %v", s, err)
		}
		v.sysctls[s] = strings.TrimSpace(string(b))
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, p := range append(append([]string{}, watchedPaths...), cgroups...) {
		_, err := os.Lstat(p)
		v.paths[p] = err == nil
	}
	if out, err := exec.Command("iptables-save").Output(); err == nil {
		v.iptables = stripComments(out)
	}
	if clusterDir != "" {
		v.leftover = leftovers(clusterDir)
	}
	return v
}

// diff lists how after differs from v.
func (v hostView) diff(after hostView) []string {
	var out []string
	for _, s := range watchedSysctls {
		if v.sysctls[s] != after.sysctls[s] {
			out = append(out, fmt.Sprintf("sysctl %s: %s before, %s after", s, v.sysctls[s], after.sysctls[s]))
		}
	}
	var paths []string
	for p := range after.paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if after.paths[p] != v.paths[p] {
			out = append(out, fmt.Sprintf("%s: exists %v before, %v after", p, v.paths[p], after.paths[p]))
		}
	}
	if v.iptables != after.iptables {
		out = append(out, fmt.Sprintf("iptables rules changed:\n%s\nbefore:\n%s", after.iptables, v.iptables))
	}
	return append(out, after.leftover...)
}

// leftovers lists the cluster's mounts, processes and directory that are
// still there.
func leftovers(dir string) []string {
	var out []string
	if _, err := os.Lstat(dir); err == nil {
		out = append(out, dir+" is left")
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, "mount "+f[4]+" is left")
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir)) {
			out = append(out, "process "+e.Name()+" is left: "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// stripComments drops iptables-save's comment lines (they carry times)
// and its packet counters.
func stripComments(b []byte) string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " ["); strings.HasPrefix(line, ":") && i > 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// idleUsage measures the components' CPU (share of one core) and resident
// memory over window, and returns it as text.
func idleUsage(t *testing.T, pids map[string]int, window time.Duration) string {
	t.Helper()
	ticks := func(pid int) float64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		u, _ := strconv.ParseFloat(f[11], 64) // utime, field 14
		s, _ := strconv.ParseFloat(f[12], 64) // stime, field 15
		return u + s
	}
	start := map[string]float64{}
	for name, pid := range pids {
		start[name] = ticks(pid)
	}
	time.Sleep(window)
	names := make([]string, 0, len(pids))
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	var cpu float64
	var rss int
	var parts []string
	for _, name := range names {
		c := (ticks(pids[name]) - start[name]) / 100 / window.Seconds() // USER_HZ is 100 on Linux
		m := rssMiB(pids[name])
		cpu += c
		rss += m
		parts = append(parts, fmt.Sprintf("%s %.1f%% %d MiB", name, 100*c, m))
	}
	return fmt.Sprintf("%.1f%% of a core, %d MiB (%s)", 100*cpu, rss, strings.Join(parts, ", "))
}

func rssMiB(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			if f := strings.Fields(line); len(f) > 1 {
				kib, _ := strconv.Atoi(f[1])
				return kib / 1024
			}
		}
	}
	return 0
}

// nonLoopbackListeners lists the TCP sockets the processes listen on at an
// address other than loopback (from /proc/net/tcp and tcp6).
func nonLoopbackListeners(t *testing.T, pids map[string]int) []string {
	t.Helper()
	owner := map[string]string{} // socket inode → component
	for name, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				owner[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = name
			}
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			t.Fatalf("cannot read %s: %v", table, err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // LISTEN
				continue
			}
			name, ours := owner[f[9]]
			if !ours {
				continue
			}
			if ip := hexIP(strings.Split(f[1], ":")[0]); !ip.IsLoopback() {
				out = append(out, fmt.Sprintf("%s listens on %s (%s)", name, ip, f[1]))
			}
		}
	}
	return out
}

// hexIP decodes /proc/net/tcp's address: 32-bit words in host (little
// endian) order.
func hexIP(h string) net.IP {
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil
	}
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b)
}
