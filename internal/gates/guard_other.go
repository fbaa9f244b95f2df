//go:build !unix

package gates

import "os"

// linkCount is how many names a file has: one, where it cannot be told.
func linkCount(os.FileInfo) uint64 { return 1 }
