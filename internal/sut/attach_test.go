package sut

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProc adds a process to a fake /proc tree.
func fakeProc(t *testing.T, root string, pid int, state byte, start uint64, args ...string) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The command name holds ") " to check the parser finds the last one.
	stat := fmt.Sprintf("%d (odd) name) %c 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100 18446744073709551615\n",
		pid, state, pid, pid, start)
	cmdline := ""
	if len(args) > 0 {
		cmdline = strings.Join(args, "\x00") + "\x00"
	}
	for name, content := range map[string]string{"stat": stat, "cmdline": cmdline} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeTree builds a fake /proc and the pid files and cgroups that point
// into it.
func fakeTree(t *testing.T) (root, files string) {
	t.Helper()
	root, files = t.TempDir(), t.TempDir()
	fakeProc(t, root, 100, 'S', 500, "/usr/bin/tempo", "-config.file=/etc/tempo.yaml")
	fakeProc(t, root, 200, 'S', 300, "/usr/bin/mimir", "-target=all")
	fakeProc(t, root, 201, 'S', 400, "/usr/bin/mimir", "-target=ingester")
	fakeProc(t, root, 300, 'Z', 100)
	fakeProc(t, root, 2, 'S', 1) // kernel thread: no command line
	writeFile(t, files, "good.pid", "100\n")
	writeFile(t, files, "stale.pid", "999")
	writeFile(t, files, "garbage.pid", "not a pid")
	writeFile(t, files, "cg/cgroup.procs", "201\n200\n300\n")
	writeFile(t, files, "empty/cgroup.procs", "")
	writeFile(t, files, "zombies/cgroup.procs", "300\n")
	if err := os.Mkdir(filepath.Join(files, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, files
}

func TestResolveFakeProc(t *testing.T) {
	t.Parallel()
	root, files := fakeTree(t)
	good, stale, garbage := filepath.Join(files, "good.pid"), filepath.Join(files, "stale.pid"), filepath.Join(files, "garbage.pid")
	cg := filepath.Join(files, "cg")
	tests := []struct {
		name    string
		attach  Attach
		wantPID int
		wantErr []string
	}{
		{"pid", Attach{PID: 100}, 100, nil},
		{"pid zombie", Attach{PID: 300}, 0, []string{"pid 300", "not running"}},
		{"pid missing", Attach{PID: 999}, 0, []string{"pid 999", "not running"}},
		{"pid file", Attach{PIDFile: good}, 100, nil},
		{"pid file missing", Attach{PIDFile: filepath.Join(files, "none.pid")}, 0, []string{"cannot read pid file", "no such file"}},
		{"pid file garbage", Attach{PIDFile: garbage}, 0, []string{garbage, `"not a pid" is not a pid`}},
		{"pid file stale", Attach{PIDFile: stale}, 0, []string{"pid 999", stale, "stale pid file"}},
		{"pattern unique", Attach{Process: `tempo\b`}, 100, nil},
		{"pattern anchored", Attach{Process: `^/usr/bin/mimir -target=all`}, 200, nil},
		{"pattern none", Attach{Process: "loki"}, 0, []string{`"loki"`, "none of 5 processes"}},
		{"pattern ambiguous", Attach{Process: "mimir"}, 0, []string{"2 processes match", "200\t/usr/bin/mimir -target=all", "201\t/usr/bin/mimir -target=ingester"}},
		{"pattern invalid", Attach{Process: "("}, 0, []string{"cannot compile process pattern"}},
		{"cgroup oldest", Attach{Cgroup: cg}, 200, nil},
		{"cgroup with pid", Attach{Cgroup: cg, PID: 100}, 100, nil},
		{"cgroup missing", Attach{Cgroup: filepath.Join(files, "nope")}, 0, []string{"cannot read cgroup", "no such file"}},
		{"cgroup plain dir", Attach{Cgroup: filepath.Join(files, "plain")}, 0, []string{"not a cgroup directory"}},
		{"cgroup empty", Attach{Cgroup: filepath.Join(files, "empty")}, 0, []string{"no running process"}},
		{"cgroup zombies", Attach{Cgroup: filepath.Join(files, "zombies")}, 0, []string{"no running process"}},
		{"nothing", Attach{}, 0, []string{"set a pid"}},
		{"two", Attach{PID: 1, Process: "x"}, 0, []string{"only one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(root, tt.attach)
			if tt.wantErr == nil {
				if err != nil || got.PID != tt.wantPID {
					t.Fatalf("Resolve = %+v, %v; want pid %d", got, err, tt.wantPID)
				}
				if got.Cmdline == "" {
					t.Error("Cmdline is empty")
				}
				if (tt.attach.Cgroup != "") != (got.Cgroup != "") {
					t.Errorf("Cgroup = %q", got.Cgroup)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve = %+v, want an error", got)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestResolveRealProcess(t *testing.T) {
	t.Parallel()
	token := fmt.Sprintf("perflab-attach-%d-%d", os.Getpid(), time.Now().UnixNano())
	a := start(t, helperSpec(t, "a", "sleep", token))
	waitCmdline(t, a.PID())
	files := t.TempDir()
	pidFile := writeFile(t, files, "a.pid", strconv.Itoa(a.PID()))
	cg := writeFile(t, files, "cg/cgroup.procs", strconv.Itoa(a.PID())+"\n")
	for _, at := range []Attach{{PID: a.PID()}, {PIDFile: pidFile}, {Process: token}, {Cgroup: filepath.Dir(cg)}} {
		got, err := Resolve("", at)
		if err != nil || got.PID != a.PID() || !strings.HasSuffix(got.Cmdline, " "+token) {
			t.Errorf("Resolve(%+v) = %+v, %v; want pid %d", at, got, err, a.PID())
		}
	}
	b := start(t, helperSpec(t, "b", "sleep", token))
	waitCmdline(t, b.PID())
	_, err := Resolve("", Attach{Process: token})
	for _, want := range []string{"2 processes match", strconv.Itoa(a.PID()) + "\t", strconv.Itoa(b.PID()) + "\t"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(ambiguous) = %v, want it to mention %q", err, want)
		}
	}
}

// waitCmdline waits until pid's command line can be read. Start returns
// once the component's exec has closed the close-on-exec pipe, a moment
// before the kernel has set up the new program's arguments: beside two
// CPU hogs, 1 run in 150 found /proc/PID/cmdline still empty (state R, no
// memory yet), and Resolve rightly skipped the process as it skips kernel
// threads. Nothing signals the end of an exec, so this polls, up to 10 s.
func waitCmdline(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if cmd, err := readCmdline(defaultProcRoot, pid); err == nil && cmd != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d has no command line after 10 s", pid)
		}
	}
}

func TestReadStat(t *testing.T) {
	t.Parallel()
	st, err := readStat(defaultProcRoot, os.Getpid())
	if err != nil || st.state == 0 || st.ppid != os.Getppid() || st.pgrp <= 0 || st.start == 0 {
		t.Fatalf("readStat(self) = %+v, %v", st, err)
	}
	root := t.TempDir()
	writeFile(t, root, "7/stat", "7 (x) S 1")
	if _, err := readStat(root, 7); err == nil {
		t.Error("readStat accepted a short stat")
	}
}
