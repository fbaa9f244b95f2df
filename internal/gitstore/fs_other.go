//go:build !linux

package gitstore

import (
	"errors"
	"os"
)

// Spares need renameat2(2)'s RENAME_NOREPLACE; elsewhere every write
// creates its files.
const renameNoReplaceSupported = false

func renameNoReplace(from, to string) error { return errors.ErrUnsupported }

func linked(f *os.File) bool { return true }

// looseKeyOf: no change time here, so loose refs are read every time.
func looseKeyOf(fi os.FileInfo) (looseKey, bool) { return looseKey{}, false }
