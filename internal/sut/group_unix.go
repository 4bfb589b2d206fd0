//go:build unix

package sut

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// supervisorProcAttr puts the supervisor out of perflab's group: a Ctrl-C
// in the terminal is for perflab.
func supervisorProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitStatus is a wait status as the supervisor sends it.
func waitStatus(ws uint32) syscall.WaitStatus { return syscall.WaitStatus(ws) }

// controlSocket returns a connected pair of Unix sockets: perflab's end,
// and the supervisor's as a file to pass on.
func controlSocket() (*net.UnixConn, *os.File, error) {
	// Close-on-exec before any other process is forked: a copy of
	// perflab's end in another child would hide perflab's death.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1]) // ExtraFiles clears it in the supervisor
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create a control socket: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "control")
	defer mine.Close()
	theirs := os.NewFile(uintptr(fds[1]), "control")
	c, err := net.FileConn(mine)
	if err != nil {
		theirs.Close()
		return nil, nil, fmt.Errorf("cannot create a control socket: %w", err)
	}
	return c.(*net.UnixConn), theirs, nil
}

// signalGroup sends sig to every process in the group; a group that is
// already gone is not an error.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// groupEmpty reports whether no live process remains in the group. Zombies
// do not count: an orphan is reaped by whatever reaps orphans, which in a
// container may be nobody.
func groupEmpty(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	alive, err := groupMembersAlive(defaultProcRoot, pgid)
	if err != nil {
		return false // cannot tell without /proc: the signal said someone is there
	}
	return !alive
}

// signalName names a signal the way users know it: "SIGKILL".
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}
