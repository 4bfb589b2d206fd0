//go:build unix

package run

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/results"
)

// storeDiagnosis says, when it can tell, why files in dir cannot grow: the
// process's file-size limit reached by a file of the run store, or a full
// file system. SQLite reports both as a failed write.
func storeDiagnosis(dir string) string {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err == nil && lim.Cur != unix.RLIM_INFINITY {
		for _, name := range []string{results.DBName, results.DBName + "-wal", results.DBName + "-journal"} {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(dir, name), &st) == nil && uint64(st.Size) >= lim.Cur {
				return fmt.Sprintf("%s reached the process's file-size limit of %d bytes", name, lim.Cur)
			}
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fs.Bavail*uint64(fs.Bsize) < 1<<20 {
		return fmt.Sprintf("the file system of %s has %d bytes free", dir, fs.Bavail*uint64(fs.Bsize))
	}
	return ""
}
