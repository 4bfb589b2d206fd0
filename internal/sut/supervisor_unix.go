//go:build unix

package sut

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisor is the state of Supervise; one goroutine owns it.
type supervisor struct {
	conn      net.Conn
	pid       int  // the component's
	subreaper bool // orphans of the tree are the supervisor's children
	reaped    bool // the component has been reaped: its pid, and so its group id, may be reused
	killing   bool // the control socket ended: kill everything left
}

// run starts the component and reaps its tree until no child is left.
// Everything is done on one goroutine locked to its thread: the
// parent-death signal is tied to the thread that forks the component, not
// to the process (go.dev/issue/27505), so that thread must live as long as
// the supervisor; and only this goroutine reaps, so a pid it signals cannot
// have been reused.
func (s *supervisor) run(spec wireSpec, r io.Reader) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	s.subreaper = becomeSubreaper() == nil
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		s.send(msgFailed, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	s.pid = cmd.Process.Pid
	_ = cmd.Process.Release() // reaped below, not by os/exec
	s.send(msgStarted, fmt.Sprint(s.pid))
	quietOutput() // the log pipes end when the component's tree is done with them
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(eof)
	}()
	for !s.reap() {
		if s.killing {
			s.killAll()
		}
		select {
		case <-chld:
		case <-eof:
			eof, s.killing = nil, true
		}
	}
	return 0
}

// reap reaps every child that has exited, reports the component's exit, and
// tells whether no child is left.
func (s *supervisor) reap() (none bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return true
		case err != nil || pid <= 0:
			return false
		case pid == s.pid:
			s.reaped = true
			s.send(msgExited, fmt.Sprintf("%d %d", time.Now().UnixNano(), uint32(ws)))
		}
	}
}

// killAll SIGKILLs the component's group while its leader is unreaped (so
// the group id is still its), and every child of the supervisor. The
// children of a killed process become the supervisor's and are killed on
// the next call, after the dead are reaped. Without the subreaper, the
// orphans of the group are not its children: the group is signalled while
// it has live members.
func (s *supervisor) killAll() {
	if !s.reaped || !s.subreaper && !groupEmpty(s.pid) {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	for _, pid := range childrenOf(defaultProcRoot, os.Getpid()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// quietOutput points the supervisor's stdout and stderr at /dev/null, so
// that it does not hold the component's log pipes open.
func quietOutput() {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer null.Close()
	_ = unix.Dup2(int(null.Fd()), 1)
	_ = unix.Dup2(int(null.Fd()), 2)
}
