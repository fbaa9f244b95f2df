//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package odb

import (
	"fmt"
	"os"
	"syscall"
)

// MapFile maps the whole file at path read-only. The returned slice must be
// released with UnmapFile. An empty file yields a nil slice.
func MapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil
	}
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("%s: file too large to map (%d bytes)", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, nil
}

// UnmapFile releases a slice obtained from MapFile.
func UnmapFile(data []byte) error {
	if data == nil {
		return nil
	}
	return syscall.Munmap(data)
}
