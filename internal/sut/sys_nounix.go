//go:build !unix

package sut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// Outside Unix there are no process groups, signals to send, or Unix
// socket pairs to pass on: perflab runs on Linux only (internal/cli says
// so at start), and these let the package build elsewhere.

var errNoUnix = errors.New("cannot supervise a component: process groups are Unix only")

func supervisorProcAttr() *syscall.SysProcAttr { return nil }

func waitStatus(ws uint32) syscall.WaitStatus { return syscall.WaitStatus{ExitCode: ws} }

func controlSocket() (*net.UnixConn, *os.File, error) { return nil, nil, errNoUnix }

func signalGroup(int, syscall.Signal) {}

func groupEmpty(int) bool { return true }

func signalName(sig syscall.Signal) string { return fmt.Sprintf("signal %d", int(sig)) }

func selfExe() (string, error) { return os.Executable() }

func waitPidfd(context.Context, int) (bool, error) { return false, errors.ErrUnsupported }

// supervisor starts nothing outside Unix.
type supervisor struct{ conn net.Conn }

func (s *supervisor) run(wireSpec, io.Reader) int {
	s.send(msgFailed, errNoUnix.Error())
	return 1
}
