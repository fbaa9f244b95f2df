//go:build !linux

package osproc

// HugePageHeap does nothing outside Linux (see heap_linux.go).
func HugePageHeap() {}
