package results

import (
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
)

// OpenReadOnly opens the run in dir for reading, finished or not, and
// never creates, removes or changes a file in dir: reports, sizes and
// comparisons read runs that may be archived, shared or on a read-only
// copy. How it reads depends on how the run was left:
//
//   - closed by perflab (sealed, one file results.db): in place, read-only
//     (SQLite mode=ro, and immutable=1 when dir is not writable);
//   - still being written by a live perflab: in place, read-only, through
//     the writer's own WAL index (results.db-shm), which already exists;
//   - in WAL mode with an empty or missing WAL (a run closed by an older
//     perflab): in place, as an immutable file;
//   - killed, its committed intervals still in results.db-wal: from a
//     private copy of results.db and results.db-wal, where SQLite can
//     replay the WAL without touching dir. Close removes the copy.
//
// It refuses a database written in a newer format version. It is for a
// process that does not have the run open itself: a process that writes a
// run reads it through its own handle (closing any descriptor of a file
// drops the POSIX locks the process's SQLite holds on it).
func OpenReadOnly(dir string) (*Run, error) {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cannot open run %s: %w", dir, err)
	}
	src, immutable, err := readPlace(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open run %s: %w", dir, err)
	}
	db, version, err := versioned(openRO(filepath.Join(src, DBName), immutable))
	if err != nil {
		if src != dir {
			_ = os.RemoveAll(src)
		}
		return nil, fmt.Errorf("cannot open run %s: %w", dir, err)
	}
	r := newRun(dir, db, version)
	r.readOnly = true
	if src != dir {
		r.snapshot = src
	}
	return r, nil
}

// readPlace decides where the database of the run in dir is read from:
// dir itself, or a private copy (a directory to remove after), and whether
// SQLite may treat the file as immutable (no locks, no WAL, no journal).
func readPlace(dir string) (src string, immutable bool, err error) {
	path := filepath.Join(dir, DBName)
	if !walMode(path) {
		return dir, !writable(dir), nil
	}
	if writerAlive(path + "-shm") {
		return dir, false, nil
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		return dir, true, nil // nothing in a WAL to read
	}
	src, err = snapshot(dir)
	return src, false, err
}

// walMode reports whether the database file at path is in WAL mode: its
// header's file format version bytes (offsets 18 and 19) are 2, where the
// rollback journal has 1. A file too short to tell is not.
func walMode(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return h[18] == 2 && h[19] == 2
}

// shmDMS is the offset in a WAL-mode database's -shm file of the byte every
// open SQLite connection holds a read lock on while it is open (the unix
// VFS's "dead man switch", UNIX_SHM_DMS: 120 + 8 lock bytes).
const shmDMS = 128

// snapshot copies results.db and results.db-wal of dir into a new private
// directory and returns it.
func snapshot(dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "perflab-run-")
	if err != nil {
		return "", fmt.Errorf("cannot copy the killed run to read it: %w", err)
	}
	for _, name := range []string{DBName, DBName + "-wal"} {
		if err := copyNew(filepath.Join(dir, name), filepath.Join(tmp, name)); err != nil {
			_ = os.RemoveAll(tmp)
			return "", fmt.Errorf("cannot copy the killed run to read it: %w", err)
		}
	}
	return tmp, nil
}

// copyNew copies the file from into a new file to.
func copyNew(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// openRO opens the database at path read-only: SQLite refuses every write
// on it. immutable also tells SQLite that nothing can change the file, so
// it takes no locks and looks for no journal or WAL.
func openRO(path string, immutable bool) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	return openSQLite(abs, q)
}
