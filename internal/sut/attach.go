package sut

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

const (
	defaultProcRoot   = "/proc"
	defaultCgroupRoot = "/sys/fs/cgroup"
	// maxCandidates is how many matching processes an ambiguity error lists.
	maxCandidates = 10
)

// Attach says how to find a component perflab did not start. Set one of
// PID, PIDFile and Process; Cgroup may be set with them, or alone.
type Attach struct {
	PID     int
	PIDFile string // file holding the pid, as daemons write it
	// Process is a regular expression matched, unanchored, against the
	// full command line (arguments joined by spaces) of every process.
	// It must match exactly one: perflab cannot tell a server from its
	// wrapper script, so an ambiguous pattern is an error listing the
	// candidates. perflab and its ancestors are never candidates.
	Process string
	// Cgroup is a cgroup directory, absolute or relative to /sys/fs/cgroup.
	// Alone, it also picks the process: the oldest in the cgroup.
	Cgroup string
}

// Attached is a resolved component.
type Attached struct {
	PID     int
	Cmdline string // arguments joined by spaces
	Cgroup  string // absolute cgroup directory; empty unless Attach.Cgroup was set
}

// Resolve finds the process (and cgroup) an Attach describes, reading
// process information under procRoot ("/proc" when empty). The process must
// be running.
func Resolve(procRoot string, a Attach) (Attached, error) {
	if procRoot == "" {
		procRoot = defaultProcRoot
	}
	if err := a.validate(); err != nil {
		return Attached{}, fmt.Errorf("cannot resolve attached component: %w", err)
	}
	var out Attached
	var err error
	if a.Cgroup != "" {
		if out.Cgroup, out.PID, err = resolveCgroup(procRoot, a.Cgroup); err != nil {
			return Attached{}, err
		}
	}
	switch {
	case a.PID != 0:
		out.PID = a.PID
	case a.PIDFile != "":
		out.PID, err = readPIDFile(a.PIDFile)
	case a.Process != "":
		out.PID, out.Cmdline, err = matchProcess(procRoot, a.Process)
	}
	if err != nil {
		return Attached{}, err
	}
	if st, err := readStat(procRoot, out.PID); err != nil || !st.running() {
		if a.PIDFile != "" {
			return Attached{}, fmt.Errorf("cannot attach to pid %d from %s: process is not running (stale pid file?)", out.PID, a.PIDFile)
		}
		return Attached{}, fmt.Errorf("cannot attach to pid %d: process is not running", out.PID)
	}
	if out.Cmdline == "" {
		out.Cmdline, _ = readCmdline(procRoot, out.PID)
	}
	return out, nil
}

func (a Attach) validate() error {
	set := 0
	for _, ok := range []bool{a.PID != 0, a.PIDFile != "", a.Process != ""} {
		if ok {
			set++
		}
	}
	switch {
	case a.PID < 0:
		return fmt.Errorf("pid %d is not a pid", a.PID)
	case set > 1:
		return errors.New("set only one of pid, pid file and process pattern")
	case set == 0 && a.Cgroup == "":
		return errors.New("set a pid, pid file, process pattern or cgroup")
	}
	return nil
}

func readPIDFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read pid file: %w", err)
	}
	text := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		if len(text) > 40 {
			text = text[:40] + "…"
		}
		return 0, fmt.Errorf("cannot read pid file %s: %q is not a pid", path, text)
	}
	return pid, nil
}

// matchProcess finds the one process whose command line matches pattern.
func matchProcess(procRoot, pattern string) (int, string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return 0, "", fmt.Errorf("cannot compile process pattern: %w", err)
	}
	pids, err := listPIDs(procRoot)
	if err != nil {
		return 0, "", fmt.Errorf("cannot list processes: %w", err)
	}
	skip := ancestors(procRoot, os.Getpid())
	var found []string
	var pid int
	var cmdline string
	for _, p := range pids {
		cmd, err := readCmdline(procRoot, p)
		if err != nil || cmd == "" || skip[p] || !re.MatchString(cmd) {
			continue // gone, kernel thread, zombie, perflab itself or no match
		}
		pid, cmdline = p, cmd
		found = append(found, fmt.Sprintf("%d\t%s", p, truncate(cmd, 120)))
	}
	switch {
	case len(found) == 0:
		return 0, "", fmt.Errorf("cannot find process matching %q: none of %d processes matches", pattern, len(pids))
	case len(found) > 1:
		n, more := len(found), ""
		if n > maxCandidates {
			more = fmt.Sprintf("\n  … and %d more", len(found)-maxCandidates)
			found = found[:maxCandidates]
		}
		return 0, "", fmt.Errorf("cannot find process matching %q: %d processes match; narrow the pattern (anchor it with ^) or use a pid file:\n  %s%s",
			pattern, n, strings.Join(found, "\n  "), more)
	}
	return pid, cmdline, nil
}

// ancestors returns pid and its ancestors: perflab and the shells that
// started it, whose command lines may well contain the pattern.
func ancestors(procRoot string, pid int) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < 64 && pid > 0 && !out[pid]; i++ {
		out[pid] = true
		st, err := readStat(procRoot, pid)
		if err != nil {
			break
		}
		pid = st.ppid
	}
	return out
}

// resolveCgroup checks that dir is a cgroup and picks its oldest running
// process.
func resolveCgroup(procRoot, dir string) (string, int, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(defaultCgroupRoot, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			err = errors.New("not a cgroup directory: no readable cgroup.procs")
		}
		return "", 0, fmt.Errorf("cannot read cgroup %s: %w", dir, err)
	}
	best, bestStart := 0, uint64(0)
	for _, field := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			return "", 0, fmt.Errorf("cannot read cgroup %s: cgroup.procs holds %q", dir, truncate(field, 40))
		}
		st, err := readStat(procRoot, pid)
		if err != nil || !st.running() {
			continue
		}
		if best == 0 || st.start < bestStart || (st.start == bestStart && pid < best) {
			best, bestStart = pid, st.start
		}
	}
	if best == 0 {
		return "", 0, fmt.Errorf("cannot attach to cgroup %s: it has no running process", dir)
	}
	return dir, best, nil
}

// procStat holds the fields of /proc/<pid>/stat this package uses.
type procStat struct {
	state byte
	ppid  int
	pgrp  int
	start uint64 // start time in clock ticks after boot
}

// running is false for zombies and dead processes.
func (s procStat) running() bool { return s.state != 'Z' && s.state != 'X' && s.state != 'x' }

func readStat(procRoot string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may itself hold ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("cannot parse stat of pid %d: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("cannot parse stat of pid %d: %d fields", pid, len(f))
	}
	st := procStat{state: f[0][0]}
	var errs [3]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.pgrp, errs[1] = strconv.Atoi(f[2])
	st.start, errs[2] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return procStat{}, fmt.Errorf("cannot parse stat of pid %d: %w", pid, err)
	}
	return st, nil
}

// readCmdline returns the arguments joined by spaces; empty for kernel
// threads and zombies.
func readCmdline(procRoot string, pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "", err
	}
	b = bytes.TrimRight(b, "\x00")
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), nil
}

// listPIDs returns the pids of the processes under procRoot.
func listPIDs(procRoot string) ([]int, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// groupMembersAlive reports whether a running (not zombie) process is in
// process group pgid.
func groupMembersAlive(procRoot string, pgid int) (bool, error) {
	pids, err := listPIDs(procRoot)
	if err != nil {
		return false, err
	}
	for _, pid := range pids {
		if st, err := readStat(procRoot, pid); err == nil && st.pgrp == pgid && st.running() {
			return true, nil
		}
	}
	return false, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
