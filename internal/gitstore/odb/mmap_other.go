//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package odb

import "os"

// MapFile reads the whole file into memory on platforms without a syscall
// mmap wrapper. The contents then behave like a private, immutable mapping.
func MapFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// UnmapFile is a no-op: the garbage collector reclaims the copy.
func UnmapFile(data []byte) error { return nil }
