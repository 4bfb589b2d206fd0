package sut

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the component in its own process group, so Stop reaches
// its children, and has the kernel SIGKILL it if its supervisor dies (see
// supervisor.run for the thread caveat). The supervisor, not this signal,
// ends the rest of the tree when perflab dies (see Supervise).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// selfExe is perflab's own executable, run again as a supervisor. The link
// still works when the file was replaced or deleted since perflab started.
func selfExe() (string, error) { return "/proc/self/exe", nil }

// becomeSubreaper makes the calling process the one that inherits the
// orphans among its descendants, instead of init.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// waitPidfd waits for pid to exit on a pidfd registered with the Go
// runtime's poller. It reports exited=false with a nil error when ctx ends
// first, and an error when pidfds cannot be used here.
func waitPidfd(ctx context.Context, pid int) (exited bool, err error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return false, err // not pollable
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var pollErr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			pollErr = err
			return err != nil || n > 0 // readable: the process has exited
		}
	})
	switch {
	case ctx.Err() != nil:
		return false, nil
	case err != nil:
		return false, err
	case pollErr != nil:
		return false, pollErr
	}
	return true, nil
}
