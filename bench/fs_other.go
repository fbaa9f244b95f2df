//go:build !linux

package main

// fileSystem: the device and the journal are not looked up here.
func fileSystem(dir string) (dev string, ext4, journal bool) { return "", false, false }
