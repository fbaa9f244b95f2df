//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package odb

import "os"

// mapFile reads the whole file into memory on platforms without a syscall
// mmap wrapper. The contents then behave like a private, immutable mapping.
func mapFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// unmapFile is a no-op: the garbage collector reclaims the copy.
func unmapFile(data []byte) error { return nil }
