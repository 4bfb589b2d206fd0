//go:build linux

package k8scluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// component is one process of the cluster, started in its own session so
// that a Ctrl-C of the test does not reach it: only Stop ends it.
type component struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	// killed says that it ignored SIGTERM for the grace and was killed:
	// gone all the same, which the test's log says but does not fail on
	// (the API server, waiting on its watchers, sometimes takes longer).
	killed bool
}

// startComponent runs bin with args in its own session, its output in
// logDir/NAME.log.
func startComponent(name, logDir, bin string, args ...string) (*component, error) {
	logPath := filepath.Join(logDir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s log: %w", name, err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// done tells whether the component has exited.
func (c *component) done() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, and SIGKILL after grace (see killed). It fails
// only when the process outlives SIGKILL.
func (c *component) stop(grace time.Duration) error {
	if c.done() {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return nil
	case <-time.After(grace):
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", c.name, c.cmd.Process.Pid)
	}
	c.killed = true
	return nil
}

// tail returns the end of the component's log, for failure messages.
func (c *component) tail() string {
	return tailFile(c.log, 3<<10)
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}

// processesUnder returns the processes, other than this one, whose
// command line names a path under one of roots: the cluster's components
// and the containerd shims they left, found by the cluster's own
// directory, never by a program name.
func processesUnder(roots []string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(cmdline), "\x00") {
			if underAny(arg, roots) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// underAny tells whether s names a path under one of roots (a flag such
// as --config=/tmp/x/y counts).
func underAny(s string, roots []string) bool {
	for _, r := range roots {
		if i := strings.Index(s, r); i >= 0 {
			rest := s[i+len(r):]
			if rest == "" || rest[0] == '/' {
				return true
			}
		}
	}
	return false
}

// killAll sends SIGKILL to pids and waits up to wait for them to be gone.
func killAll(pids []int, wait time.Duration) error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(wait)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d is still there %v after SIGKILL", pid, wait)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// zombie tells whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// cgroupHierarchies returns the mount points of the cgroup hierarchies
// (v1 controllers, named and the v2 one).
func cgroupHierarchies() []string {
	var out []string
	for _, m := range mountInfo() {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			out = append(out, m.point)
		}
	}
	sort.Strings(out)
	return out
}

// cgroupProcs returns the processes in the cgroup tree at dir.
func cgroupProcs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// removeCgroupTree removes the cgroup at dir and every cgroup below it,
// deepest first (a cgroup is removed with rmdir once empty).
func removeCgroupTree(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cannot remove cgroup %s: %w", dirs[i], err))
		}
	}
	return errors.Join(errs...)
}

type mount struct{ point, fstype string }

// mountInfo reads this process's mount table.
func mountInfo() []mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{point: unescapeMount(fields[4]), fstype: fields[sep+1]})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsUnder returns the mount points under roots, deepest first.
func mountsUnder(roots []string) []string {
	var out []string
	for _, m := range mountInfo() {
		if underAny(m.point, roots) && !slices.Contains(out, m.point) {
			out = append(out, m.point)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unmountUnder detaches every mount under roots (the pods' volumes and
// the containers' root filesystems, when the kubelet or containerd did not
// get to it).
func unmountUnder(roots []string) error {
	var errs []error
	for range 3 { // a mount may hide another at the same point
		points := mountsUnder(roots)
		if len(points) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, p := range points {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("cannot unmount %s: %w", p, err))
			}
		}
	}
	if left := mountsUnder(roots); len(left) > 0 {
		errs = append(errs, fmt.Errorf("mounts left: %s", strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}
