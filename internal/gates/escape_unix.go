//go:build unix

package gates

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// linkCount is how many hard links a file has (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// ChangeTime is when the entry at abs (a symlink itself) last changed,
// content or metadata, as its file system stamped it; ok is false when
// it cannot be read (a missing entry).
func ChangeTime(abs string) (t time.Time, ok bool) {
	var st unix.Stat_t
	if unix.Lstat(abs, &st) != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}
