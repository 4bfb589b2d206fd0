package sut

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// sleeper starts a process the package did not start, as an attached
// component would be.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestWatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := sleeper(t)
	ch := Watch(ctx, cmd.Process.Pid)
	select {
	case <-ch:
		t.Fatal("Watch fired while the process runs")
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	within(t, ch, 10*time.Second, "Watch after the process exited")
	within(t, Watch(ctx, 1<<30), 10*time.Second, "Watch of a pid that does not exist")
}

// TestWaitPidfd checks the pidfd path itself, which Watch would silently
// replace by polling.
func TestWaitPidfd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := sleeper(t)
	type result struct {
		exited bool
		err    error
	}
	res := make(chan result, 1)
	go func() {
		exited, err := waitPidfd(ctx, cmd.Process.Pid)
		res <- result{exited, err}
	}()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := <-res; !r.exited || r.err != nil {
		t.Fatalf("waitPidfd = %v, %v; want exited", r.exited, r.err)
	}

	other := sleeper(t)
	cctx, ccancel := context.WithCancel(ctx)
	go func() {
		exited, err := waitPidfd(cctx, other.Process.Pid)
		res <- result{exited, err}
	}()
	ccancel()
	if r := <-res; r.exited || r.err != nil {
		t.Fatalf("waitPidfd after cancel = %v, %v; want not exited, no error", r.exited, r.err)
	}
}

func TestPollExit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := sleeper(t)
	done := make(chan bool, 1)
	go func() { done <- pollExit(ctx, defaultProcRoot, cmd.Process.Pid, 10*time.Millisecond) }()
	if err := cmd.Process.Kill(); err != nil { // a zombie until the cleanup reaps it
		t.Fatal(err)
	}
	if !<-done {
		t.Fatal("pollExit = false after the process exited")
	}
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if pollExit(cctx, defaultProcRoot, sleeper(t).Process.Pid, 10*time.Millisecond) {
		t.Fatal("pollExit = true for a running process")
	}
}
