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
