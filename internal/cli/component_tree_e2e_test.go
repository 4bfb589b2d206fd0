package cli_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// TestRunPlanKilledTakesComponentTree kills perflab with SIGKILL while its
// component, a shell that started a server of its own (here a sleep), runs:
// the component and the process it started must die with perflab, even the
// one that left the component's process group, and not hold on to ports.
func TestRunPlanKilledTakesComponentTree(t *testing.T) {
	fifo, pids := pidsFIFO(t)
	path := writePlan(t, fmt.Sprintf(`
name: killed
components:
  - name: server
    run:
      command: sh
      args: [-c, 'sleep 300 & a=$!; setsid sleep 300 & echo $$ $a $! > "$0"; wait', %q]
profiles:
  - name: long
    duration: 1h
    workloads:
      - {name: get, driver: http, rate: 10/s, params: {url: "http://127.0.0.1:%d/"}}
`, fifo, testutil.FreePort(t)))
	cmd := perflabCmd("run", path, "--out", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tree := <-pids
	if len(tree) != 3 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the component told pids %v, want its own and its two children's", tree)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	names := []string{"the component", "its child", "its child that left the group"}
	for i, pid := range tree {
		if !gone(pid, 20*time.Second) {
			t.Errorf("%s (pid %d) still runs 20s after perflab was killed", names[i], pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// pidsFIFO makes a named pipe a component writes a line of pids to, and
// returns its path and a channel that yields them, or none after 30 s.
func pidsFIFO(t *testing.T) (string, <-chan []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pids.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0) // never blocks, and honours the deadline
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	ch := make(chan []int, 1)
	go func() {
		line, _ := bufio.NewReader(f).ReadString('\n')
		var pids []int
		for _, field := range strings.Fields(line) {
			if pid, err := strconv.Atoi(field); err == nil && pid > 0 {
				pids = append(pids, pid)
			}
		}
		ch <- pids
	}()
	return path, ch
}

// gone polls until process pid no longer runs (it does not exist, or it is
// a zombie), for at most d; it reports whether it ended.
func gone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
