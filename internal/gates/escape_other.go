//go:build !unix

package gates

import (
	"os"
	"time"
)

// linkCount is how many hard links a file has: unknown here, so 1.
func linkCount(os.FileInfo) uint64 { return 1 }

// ChangeTime is when the entry at abs last changed: here its
// modification time, which no other time stands for.
func ChangeTime(abs string) (time.Time, bool) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}
