//go:build unix && !linux

package sut

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts the component in its own process group, so Stop reaches
// its children. Outside Linux there is no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// selfExe is perflab's own executable, run again as a supervisor.
func selfExe() (string, error) { return os.Executable() }

// becomeSubreaper is Linux only: elsewhere a process that leaves the
// component's group escapes the supervisor.
func becomeSubreaper() error { return errors.ErrUnsupported }

// waitPidfd is Linux only; Watch falls back to polling.
func waitPidfd(context.Context, int) (bool, error) {
	return false, errors.ErrUnsupported
}
