//go:build unix

package osproc

import (
	"os"
	"syscall"
)

func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
