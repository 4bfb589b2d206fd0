//go:build unix

package sut

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStopEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := helperSpec(t, "stubborn", "serve-ignore-term", addr, "0s")
	s.StopGrace = 300 * time.Millisecond
	s.Ready = Probe{TCP: addr, Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}
	p := start(t, s)
	if err := p.WaitReady(context.Background()); err != nil { // SIGTERM is ignored from here on
		t.Fatal(err)
	}
	stopNow(t, p)
	e := p.Exit()
	if e == nil || e.Signal != "SIGKILL" || !e.Stopped || !e.Killed || e.Grace != s.StopGrace {
		t.Fatalf("Exit() = %+v, want SIGKILL, stopped, killed after the %v grace", e, s.StopGrace)
	}
	if got, want := e.StopString(), "still running 300ms after SIGTERM (its stop grace): killed with SIGKILL"; got != want {
		t.Errorf("StopString() = %q, want %q", got, want)
	}
}

func TestStopGraceful(t *testing.T) {
	t.Parallel()
	t.Run("handles SIGTERM", func(t *testing.T) {
		addr := freeAddr(t)
		s := helperSpec(t, "polite", "serve", addr, "0s")
		s.StopGrace = time.Minute
		s.Ready = Probe{TCP: addr, Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}
		p := start(t, s)
		if err := p.WaitReady(context.Background()); err != nil { // the handler is installed
			t.Fatal(err)
		}
		stopNow(t, p)
		if e := p.Exit(); e == nil || e.Code != 0 || !e.Stopped || e.Killed {
			t.Errorf("Exit() = %+v, want status 0, stopped, not killed", e)
		} else if got := e.StopString(); got != "exited with status 0 after SIGTERM" {
			t.Errorf("StopString() = %q", got)
		}
		if log := readLog(t, s, "stderr"); !strings.HasSuffix(log, "got SIGTERM, shutting down\n") {
			t.Errorf("stderr log = %q: not complete after Stop", log)
		}
	})
	t.Run("killed by SIGTERM", func(t *testing.T) {
		s := shSpec(t, "plain", "exec sleep 100")
		s.StopGrace = time.Minute
		p := start(t, s)
		stopNow(t, p)
		if e := p.Exit(); e == nil || e.String() != "killed by signal SIGTERM" || !e.Stopped {
			t.Errorf("Exit() = %+v", e)
		}
	})
}

// TestStopReachesChildren checks that Stop ends a child the component
// forked, whether the component still runs or exited already, whether the
// child ignores SIGTERM (it is killed when the grace ends) or left the
// component's process group.
func TestStopReachesChildren(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		killed       bool
	}{
		{"component waits for it", `sleep 100 & echo $! > "$1"; wait`, false},
		{"component exited", `sleep 100 & echo $! > "$1"`, false},
		{"child ignores SIGTERM", `sh -c 'trap "" TERM; echo $$ > "$1"; exec sleep 100' sh "$1" & wait`, true},
		{"child left the group", `setsid sh -c 'echo $$ > "$1"; exec sleep 100' sh "$1" & wait`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fifo, pidc := pidFIFO(t)
			p := start(t, shSpec(t, "parent", tt.script, fifo))
			child := <-pidc
			if child == 0 {
				t.Fatal("no child pid from the component")
			}
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			if !isRunning(child) {
				t.Fatalf("child %d is not running before Stop", child)
			}
			stopNow(t, p)
			if isRunning(child) {
				t.Errorf("child %d still runs after Stop", child)
			}
			if e := p.Exit(); e == nil || e.Killed != tt.killed {
				t.Errorf("Exit() = %+v after Stop, want killed %v", e, tt.killed)
			}
		})
	}
}

// pidFIFO makes a named pipe the component writes a pid to, and returns
// its path and a channel that yields the pid, or 0 after 20 s.
func pidFIFO(t *testing.T) (string, <-chan int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pid.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR never blocks on a FIFO, and the file is pollable, so the
	// read below honours its deadline.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	ch := make(chan int, 1)
	go func() {
		line, _ := bufio.NewReader(f).ReadString('\n')
		pid, _ := strconv.Atoi(strings.TrimSpace(line))
		ch <- pid
	}()
	return path, ch
}

// isRunning reports whether pid runs and is not a zombie.
func isRunning(pid int) bool {
	st, err := readStat(defaultProcRoot, pid)
	return err == nil && st.running()
}

func TestStopIdempotent(t *testing.T) {
	t.Parallel()
	p := start(t, shSpec(t, "api", "exit 2"))
	within(t, p.Done(), 20*time.Second, "Done")
	for i := range 3 {
		stopNow(t, p)
		if e := p.Exit(); e == nil || e.String() != "exited with status 2" || e.Stopped {
			t.Errorf("Stop #%d: Exit() = %+v, want status 2, not stopped", i+1, e)
		}
	}
}

func TestStopContextEnds(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := helperSpec(t, "stubborn", "serve-ignore-term", addr, "0s")
	s.StopGrace = time.Hour
	s.Ready = Probe{TCP: addr, Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}
	p := start(t, s)
	if err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := p.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want the context's error", err)
	}
	// The group was SIGKILLed when the context ended.
	within(t, p.Done(), 10*time.Second, "Done after Stop gave up")
	if e := p.Exit(); e.Signal != "SIGKILL" || !e.Stopped || !e.Killed || e.Grace != 0 {
		t.Errorf("Exit() = %+v", e)
	}
}

// TestParentDeathKillsComponent kills a perflab stand-in with SIGKILL and
// checks that the component it started dies too, even though the goroutine
// that called Start was locked to a thread that has ended since.
func TestParentDeathKillsComponent(t *testing.T) {
	t.Parallel()
	fifo, pidc := pidFIFO(t)
	parent := start(t, helperSpec(t, "parent", "parent", fifo))
	child := <-pidc
	if child == 0 {
		t.Fatal("the component died when the thread that started it ended")
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gone := Watch(ctx, child)
	if err := syscall.Kill(parent.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	within(t, gone, 10*time.Second, "the component exiting after its parent was killed")
}

// TestParentDeathKillsComponentTree kills a perflab stand-in with SIGKILL
// and checks that the processes its component started die too: one in the
// component's process group, and one that left it.
func TestParentDeathKillsComponentTree(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, script string }{
		{"in the group", `sleep 300 & echo $! > "$1"; wait`},
		{"left the group", `setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$1" & wait`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fifo, pidc := pidFIFO(t)
			parent := start(t, helperSpec(t, "parent", "parent-tree", fifo, tt.script))
			grandchild := <-pidc
			if grandchild == 0 {
				t.Fatal("no pid from the component")
			}
			t.Cleanup(func() {
				if t.Failed() { // still ours: it outlived perflab
					_ = syscall.Kill(grandchild, syscall.SIGKILL)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			gone := Watch(ctx, grandchild)
			if err := syscall.Kill(parent.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			within(t, gone, 20*time.Second, "the component's child exiting after perflab was killed")
		})
	}
}
