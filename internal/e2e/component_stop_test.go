//go:build linux

package e2e

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
// component, a shell that started servers of its own (here sleeps), runs:
// the component and the processes it started must die with perflab, even
// the one that left the component's process group (it tells the pids once
// it has), and not hold on to ports.
func TestRunPlanKilledTakesComponentTree(t *testing.T) {
	t.Parallel()
	fifo, pids := pidsFIFO(t)
	path := writePlan(t, fmt.Sprintf(`
name: killed
components:
  - name: server
    run:
      command: sh
      args: [-c, 'sleep 300 & setsid sh -c ''echo $1 $2 $$ > "$0"; exec sleep 300'' "$0" $$ $! & wait', %q]
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

// TestRunPlanRecordsKilledComponent: a component that ignores SIGTERM is
// killed when its stop grace ends; the run records it, perflab warns, and
// report.md, report.html and summary.json say so.
func TestRunPlanRecordsKilledComponent(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	// The shell ignores SIGTERM before it starts the server, whose readiness
	// so shows that the trap is set; after the server's exit on SIGTERM the
	// shell goes on with a sleep that ignores it too.
	path := writePlan(t, fmt.Sprintf(`
name: stubborn
components:
  - name: stubborn
    run:
      command: sh
      args: [-c, 'trap "" TERM; "$0" target http --addr 127.0.0.1:%[1]d; sleep 300', "{{perflab}}"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
      stop_grace: 300ms
profiles:
  - name: load
    duration: 1s
    workloads:
      - {name: get, driver: http, rate: 20/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port))
	r := run(t, "run", path, "--out", t.TempDir())
	how := "still running 300ms after SIGTERM (its stop grace): killed with SIGKILL"
	if r.code != 0 || !strings.Contains(r.stderr, "perflab: warning: component stubborn: "+how+"\n") {
		t.Errorf("exit %d, want 0 with a warning\n%s", r.code, r.stderr)
	}
	type stop struct {
		GraceSeconds float64 `json:"grace_seconds"`
		Killed       bool    `json:"killed"`
		How          string  `json:"how"`
	}
	s, md, dir := readRunAs[struct {
		Cells []struct {
			Warnings   []string `json:"warnings"`
			Components []struct {
				Name string `json:"name"`
				Stop *stop  `json:"stop"`
			} `json:"components"`
		} `json:"cells"`
	}](t, r)
	if len(s.Cells) != 1 || len(s.Cells[0].Components) == 0 {
		t.Fatalf("summary.json: %+v", s)
	}
	c := s.Cells[0]
	if got := c.Components[0].Stop; got == nil || *got != (stop{0.3, true, how}) {
		t.Errorf("summary.json: %s stop = %+v", c.Components[0].Name, got)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "Component stubborn was killed when its cell ended") {
		t.Errorf("summary.json: cell warnings %q", c.Warnings)
	}
	if !strings.Contains(md, "- **Warning:** Component `stubborn` was killed when its cell ended") {
		t.Errorf("report.md does not warn:\n%s", md)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "Warning: Component stubborn was killed when its cell ended") {
		t.Errorf("report.html does not warn (%v)", err)
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
