//go:build !linux

package osproc

import (
	"errors"
	"os"
)

// HasRenameNoReplace is false: RenameNoReplace is Linux's renameat2(2).
var HasRenameNoReplace = false

// RenameNoReplace fails here (see the Linux build).
func RenameNoReplace(from, to string) error {
	return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: errors.ErrUnsupported}
}

// Rename is os.Rename (see the Linux build).
func Rename(from, to string) error { return os.Rename(from, to) }
