//go:build unix

package gates

import (
	"os"
	"syscall"
)

// linkCount is how many names a file has.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
