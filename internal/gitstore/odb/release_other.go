//go:build !linux

package odb

// releaseMapped keeps the pages: elsewhere than Linux the mapping is left
// to the system (or, without mmap, the file was read into memory).
func releaseMapped(data []byte) {}
