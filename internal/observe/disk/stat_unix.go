//go:build unix

package disk

import (
	"io/fs"
	"syscall"
)

// statOf is the stat_t of info, an lstat's.
func statOf(info fs.FileInfo) (stat, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return stat{}, false
	}
	return stat{dev: uint64(st.Dev), ino: st.Ino, nlink: uint64(st.Nlink), blocks: st.Blocks}, true
}
