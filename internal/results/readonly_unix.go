//go:build unix

package results

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// writable reports whether this process may write in dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// writerAlive reports whether another process has the database whose WAL
// index is shm open: a perflab still writing the run. A killed process
// holds no lock. When it cannot tell, it says alive, so the run is read in
// place, as SQLite reads a live run.
func writerAlive(shm string) bool {
	f, err := os.Open(shm)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: shmDMS, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return true
	}
	return lk.Type != unix.F_UNLCK
}
