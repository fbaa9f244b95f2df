//go:build !linux

package gitstore

import "os"

// looseKeyOf: no change time here, so loose refs are read every time.
func looseKeyOf(fi os.FileInfo) (looseKey, bool) { return looseKey{}, false }

// openRaw is os.OpenFile here (see the Linux version for why it differs
// there).
func openRaw(path string, flag int, perm uint32) (*os.File, error) {
	return os.OpenFile(path, flag, os.FileMode(perm))
}

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

// keyOfStat: nothing to key by here, so it matches no file (LooseRefsAt
// then declines, and its callers read packed-refs).
func keyOfStat(st *fileStat) fileKey { return fileKey{ino: -1} }
