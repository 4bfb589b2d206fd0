package httpdriver

import "golang.org/x/sys/unix"

// peekSocket reads the next bytes of socket fd into b without taking them
// and without waiting; again says there were none yet.
func peekSocket(fd uintptr, b []byte) (n int, again bool, err error) {
	n, _, err = unix.Recvfrom(int(fd), b, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return n, err == unix.EAGAIN, err
}

// waiting is how many bytes socket fd holds unread (SIOCINQ); 0 when it
// cannot say.
func waiting(fd uintptr) int {
	n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	if err != nil {
		return 0
	}
	return n
}
