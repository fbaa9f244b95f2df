//go:build !linux

package gitstore

import "os"

// linked: spares are Linux only (osproc.HasRenameNoReplace), so this is
// never asked here.
func linked(f *os.File) bool { return true }

// looseKeyOf: no change time here, so loose refs are read every time.
func looseKeyOf(fi os.FileInfo) (looseKey, bool) { return looseKey{}, false }
