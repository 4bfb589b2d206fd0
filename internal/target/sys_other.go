//go:build !linux

package target

import (
	"context"
	"errors"
	"syscall"
)

// sysProcAttr puts the component in its own process group, so Stop reaches
// its children. Outside Linux there is no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitPidfd is Linux only; Watch falls back to polling.
func waitPidfd(context.Context, int) (bool, error) {
	return false, errors.ErrUnsupported
}
