//go:build !linux

package gitstore

import "os"

// linked: spares are Linux only (osproc.HasRenameNoReplace), so this is
// never asked here.
func linked(f *os.File) bool { return true }

// looseKeyOf: no change time here, so loose refs are read every time.
func looseKeyOf(fi os.FileInfo) (looseKey, bool) { return looseKey{}, false }

// openRaw is os.OpenFile here (see the Linux version for why it differs
// there).
func openRaw(path string, flag int, perm uint32) (*os.File, error) {
	return os.OpenFile(path, flag, os.FileMode(perm))
}

// openSpare opens the spare at path for writing (shared spares are not
// used here: canPool is false).
func openSpare(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }

// fileStat: readSmall fills in nothing here.
type fileStat struct{}

// readSmall reads the file at path whole (see the Linux version).
func readSmall(path string, buf []byte, limit int, st *fileStat) ([]byte, error) {
	b, err := os.ReadFile(path)
	if limit > 0 && len(b) > limit {
		b = b[:limit]
	}
	return b, err
}

// looseKeyOfStat: no change time here, so loose refs are read every time.
func looseKeyOfStat(st *fileStat) (looseKey, bool) { return looseKey{}, false }

// createTemp is os.CreateTemp here.
func createTemp(dir, prefix string) (*os.File, error) { return os.CreateTemp(dir, prefix) }

// canRetire: the discard a deletion waits for is Linux's (see retire.go);
// elsewhere replaced files are freed at once.
const canRetire = false

// keyOfStat: nothing to key by here, so it matches no file (LooseRefsAt
// then declines, and its callers read packed-refs).
func keyOfStat(st *fileStat) fileKey { return fileKey{ino: -1} }
