package gitstore

import (
	"os"
	"syscall"
)

// linked reports whether f still has a name (a spare removed by hand has
// none, and renaming it would fail).
func linked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 0
}

// looseKeyOf is the identity of one version of a loose ref file (see
// looseKey).
func looseKeyOf(fi os.FileInfo) (looseKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return looseKey{}, false
	}
	return looseKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
