package target

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the component in its own process group, so Stop reaches
// its children, and has the kernel SIGKILL it if perflab dies (see launch
// for the thread caveat). Only the component itself gets the signal; its
// children survive a killed perflab unless they watch for their parent.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
