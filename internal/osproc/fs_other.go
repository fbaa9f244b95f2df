//go:build !linux

package osproc

// FileSystem: the device and the journal are not looked up here.
func FileSystem(dir string) (dev string, ext4, journal bool) { return "", false, false }
